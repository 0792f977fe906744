import type { KeyBudgetPeriod } from '../store/index.js';
import { formatUsd } from '../billing/index.js';

/** The periods a key's budget may count over. */
export const BUDGET_PERIODS = ['total', 'day', 'month'] as const satisfies readonly KeyBudgetPeriod[];

/** A key's spend limit: at most `micros` of charges (less their refunds) per `period`. */
export interface KeyBudget {
  micros: number;
  period: KeyBudgetPeriod;
}

/** When the current period began (epoch ms): the UTC day or month of `now`; 0 for `total` (decision 1902). */
export function periodStart(period: KeyBudgetPeriod, now: number): number {
  if (period === 'total') return 0;
  const d = new Date(now);
  return period === 'day' ? Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()) : Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
}

/** How people read a budget: "5.0000 USD per month (UTC)", "5.0000 USD in total". */
export function describeBudget(b: KeyBudget): string {
  const amount = `${formatUsd(b.micros, 4)} USD`;
  if (b.period === 'total') return `${amount} in total`;
  return `${amount} per ${b.period} (UTC)`;
}
