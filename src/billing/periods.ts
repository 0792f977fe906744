import type { KeyBudgetPeriod } from '../store/index.js';

/** When the period holding `at` began (epoch ms): its UTC day or UTC month; 0 for `total` (decision 1902). */
export function periodStart(period: KeyBudgetPeriod, at: number): number {
  if (period === 'total') return 0;
  const d = new Date(at);
  return period === 'day' ? Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()) : Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
}
