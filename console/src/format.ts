// Money and times as the ledger has them: integer micro-USD, shown exactly (never a float's rounding).

/** Micro-USD as USD text: at least 4 decimals (like the balance), more only when the amount has them. */
export function usd(micros: number): string {
  const sign = micros < 0 ? '-' : '';
  const abs = Math.abs(Math.round(micros));
  let frac = String(abs % 1_000_000).padStart(6, '0');
  while (frac.length > 4 && frac.endsWith('0')) frac = frac.slice(0, -1);
  return `${sign}${Math.floor(abs / 1_000_000)}.${frac}`;
}

export function when(ms: number | null | undefined): string {
  if (!ms) return '—';
  return new Date(ms).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
}

export function seconds(ms: number | null | undefined): string {
  return ms == null ? '—' : `${(ms / 1000).toFixed(1)} s`;
}

/** The first moment of the current calendar month in UTC (budgets and spend use UTC months). */
export function monthStartUtc(now = new Date()): number {
  return Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1);
}
