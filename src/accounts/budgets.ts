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

const ISO_TIME = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2}))?$/;

/** An expiry as the operator writes it: an ISO 8601 date (midnight UTC) or a time with its zone ("Z" or "+02:00"); null if not one. */
export function parseIsoTime(value: string): number | null {
  if (!ISO_TIME.test(value)) return null;
  // Date.parse rolls 2026-02-30 over into March: the date must exist as written.
  const [y, m, d] = value.slice(0, 10).split('-').map(Number) as [number, number, number];
  const day = new Date(Date.UTC(y, m - 1, d));
  if (day.getUTCMonth() !== m - 1 || day.getUTCDate() !== d) return null;
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : at;
}
