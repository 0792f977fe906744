import type { LedgerEntry } from './ledger.js';
import { formatUsd } from './money.js';

/** A ledger entry as the operator sees it (CLI --json and the admin API). */
export function entryView(e: LedgerEntry) {
  return {
    id: e.id,
    kind: e.kind,
    amount: formatUsd(e.amountMicros, 6),
    amountMicros: e.amountMicros,
    balanceAfter: formatUsd(e.balanceAfterMicros, 6),
    taskId: e.taskId,
    keyId: e.keyId,
    reason: e.reason,
    createdAt: new Date(e.createdAt).toISOString(),
  };
}

function csvField(v: string | number | null): string {
  const s = v == null ? '' : String(v);
  // Quote always-dangerous characters, and defuse spreadsheet formulas in free text.
  const safe = /^[=+\-@\t\r]/.test(s) && Number.isNaN(Number(s)) ? `'${s}` : s;
  return /[",\n\r]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

/** The ledger as CSV with a header line. */
export function entriesCsv(entries: LedgerEntry[]): string {
  const lines = ['id,created_at,kind,amount_usd,balance_after_usd,task_id,reason'];
  for (const e of entries) {
    const v = entryView(e);
    lines.push([v.id, v.createdAt, v.kind, v.amount, v.balanceAfter, v.taskId, v.reason].map(csvField).join(','));
  }
  return `${lines.join('\n')}\n`;
}
