import { Errors } from '../errors.js';

export const DAY_MS = 86_400_000;

/** A period [from, to) in epoch ms, both at whole UTC days when given as dates. */
export interface Window {
  from: number;
  to: number;
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})$/;

/** A date (`2026-11-01`, midnight UTC) or an ISO 8601 time with its zone; null when neither or not a real date. */
function parseTime(value: string): { at: number; date: boolean } | null {
  const date = DATE.test(value);
  if (!date && !TIME.test(value)) return null;
  const [y, m, d] = value.slice(0, 10).split('-').map(Number) as [number, number, number];
  const day = new Date(Date.UTC(y, m - 1, d));
  if (day.getUTCMonth() !== m - 1 || day.getUTCDate() !== d) return null;
  const at = Date.parse(date ? `${value}T00:00:00Z` : value);
  return Number.isNaN(at) ? null : { at, date };
}

export const utcDay = (at: number) => Math.floor(at / DAY_MS) * DAY_MS;

/**
 * Reads `from` and `to` (query texts): a date or an ISO time each; a date `to` counts its whole
 * day (the period ends at the next midnight UTC). Defaults: `to` today, `from` `defaultDays - 1`
 * days before it, so the period is `defaultDays` whole UTC days ending with today. At most
 * `maxDays` long.
 */
export function readWindow(q: { from?: string; to?: string }, now: number, opts: { defaultDays: number; maxDays: number }): Window {
  const read = (field: 'from' | 'to') => {
    const text = q[field];
    if (text === undefined || text === '') return undefined;
    const t = parseTime(text);
    if (!t)
      throw Errors.invalid(
        `${field} must be a date such as "2026-11-01" (UTC) or an ISO 8601 time with its zone such as "2026-11-01T12:00:00Z" (got ${JSON.stringify(text.slice(0, 40))})`,
      );
    return t;
  };
  const f = read('from');
  const t = read('to');
  const to = t ? (t.date ? t.at + DAY_MS : t.at) : utcDay(now) + DAY_MS;
  const from = f ? f.at : to - opts.defaultDays * DAY_MS;
  if (from >= to)
    throw Errors.invalid(
      `from must be before to (got from ${new Date(from).toISOString()}, to ${new Date(to).toISOString()}; a date as to counts its whole day)`,
    );
  if (to - from > opts.maxDays * DAY_MS)
    throw Errors.invalid(`the period from..to must be at most ${opts.maxDays} days (got ${Math.ceil((to - from) / DAY_MS)})`);
  return { from, to };
}

/** The UTC day of `at` as `YYYY-MM-DD`. */
export const dayText = (at: number) => new Date(at).toISOString().slice(0, 10);
/** The UTC month of `at` as `YYYY-MM`. */
export const monthText = (at: number) => new Date(at).toISOString().slice(0, 7);

/** The text of a CSV field; formulas in free text are defused for spreadsheets. */
export function csvField(v: string | number | null): string {
  const s = v == null ? '' : String(v);
  const safe = /^[=+\-@\t\r]/.test(s) && Number.isNaN(Number(s)) ? `'${s}` : s;
  return /[",\n\r]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}
