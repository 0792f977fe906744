import type { KeyBudgetPeriod } from '../store/index.js';
import { formatUsd, periodStart } from '../billing/index.js';

/** The periods a key's budget may count over. */
export const BUDGET_PERIODS = ['total', 'day', 'month'] as const satisfies readonly KeyBudgetPeriod[];

/** A key's spend limit: at most `micros` of charges (less their refunds) per `period`. */
export interface KeyBudget {
  micros: number;
  period: KeyBudgetPeriod;
}

export { periodStart };

/** How people read a budget: "5.0000 USD per month (UTC)", "5.0000 USD in total". */
export function describeBudget(b: KeyBudget): string {
  const amount = `${formatUsd(b.micros, 4)} USD`;
  if (b.period === 'total') return `${amount} in total`;
  return `${amount} per ${b.period} (UTC)`;
}
