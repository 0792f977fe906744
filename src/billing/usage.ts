import { sql, type Kysely } from 'kysely';
import type { DB } from '../store/index.js';
import { formatUsd } from './money.js';
import { csvField, dayText, DAY_MS, type Window } from './window.js';

export const USAGE_GROUPS = ['day', 'model', 'key'] as const;
export type UsageGroup = (typeof USAGE_GROUPS)[number];

/** One group's spend: what was charged less what was refunded in the period (micro-USD), and the number of charges. */
export interface UsageFigures {
  chargedMicros: number;
  refundedMicros: number;
  spentMicros: number;
  tasks: number;
}
export type UsageRow = UsageFigures & { day?: string; model?: string; keyId?: string | null; keyName?: string | null };
export interface Usage {
  accountId: string;
  from: number;
  to: number;
  group: UsageGroup;
  rows: UsageRow[];
  total: UsageFigures;
}

interface Raw {
  g: string | number | null;
  name?: string | null;
  charged: string | number | null;
  refunded: string | number | null;
  tasks: string | number | null;
}

// Charges are negative entries, refunds (full and partial) positive: spend is their negated sum.
const figures = sql`coalesce(sum(case when l.kind = 'charge' then -l.amount_micros else 0 end), 0) as charged,
  coalesce(sum(case when l.kind = 'charge' then 0 else l.amount_micros end), 0) as refunded,
  coalesce(sum(case when l.kind = 'charge' then 1 else 0 end), 0) as tasks`;
// The period is a range of ledger_account_time (migration 014); refunds count when they were made.
const period = (accountId: string, w: Window) =>
  sql`l.account_id = ${accountId} and l.created_at >= ${w.from} and l.created_at < ${w.to} and l.kind in ('charge', 'refund', 'partial_refund')`;

/** The statement of one grouping (exported for the bench, which also times it without the index). */
export function usageQuery(accountId: string, w: Window, group: UsageGroup, opts: { unindexed?: boolean } = {}) {
  // `+ 0` and `|| ''` keep the database from using an index: the bench's full-scan baseline.
  const where = opts.unindexed
    ? sql`l.account_id || '' = ${accountId} and l.created_at + 0 >= ${w.from} and l.created_at + 0 < ${w.to} and l.kind in ('charge', 'refund', 'partial_refund')`
    : period(accountId, w);
  if (group === 'day') return sql<Raw>`select l.created_at / ${sql.lit(DAY_MS)} as g, ${figures} from ledger_entries l where ${where} group by 1`;
  if (group === 'key')
    return sql<Raw>`select l.key_id as g, k.name as name, ${figures} from ledger_entries l left join api_keys k on k.id = l.key_id where ${where} group by l.key_id, k.name`;
  // The model is kept on the charge and its refunds: decision 1906 measured a join with tasks at up to 8 times slower.
  return sql<Raw>`select l.model as g, ${figures} from ledger_entries l where ${where} group by l.model`;
}

const num = (v: string | number | null | undefined) => Number(v ?? 0);

/** Spend of one account per UTC day, model or key over the window, net of refunds made in it. */
export async function usageOf(db: Kysely<DB>, accountId: string, w: Window, group: UsageGroup): Promise<Usage> {
  const { rows: raw } = await usageQuery(accountId, w, group).execute(db);
  const rowOf = (r: Raw | undefined): UsageFigures => {
    const chargedMicros = num(r?.charged);
    const refundedMicros = num(r?.refunded);
    return { chargedMicros, refundedMicros, spentMicros: chargedMicros - refundedMicros, tasks: num(r?.tasks) };
  };
  let rows: UsageRow[];
  if (group === 'day') {
    // Every day of the period, with zeros where nothing was spent (charts want them).
    const byDay = new Map(raw.map((r) => [num(r.g), r]));
    rows = [];
    for (let d = Math.floor(w.from / DAY_MS); d * DAY_MS < w.to; d++) rows.push({ day: dayText(d * DAY_MS), ...rowOf(byDay.get(d)) });
  } else if (group === 'key') {
    rows = raw.map((r) => ({ keyId: r.g === null ? null : String(r.g), keyName: r.name ?? null, ...rowOf(r) }));
  } else {
    rows = raw.map((r) => ({ model: r.g === null ? '(unknown)' : String(r.g), ...rowOf(r) }));
  }
  if (group !== 'day') rows.sort((a, b) => b.spentMicros - a.spentMicros || String(a.model ?? a.keyId).localeCompare(String(b.model ?? b.keyId)));
  const total = rows.reduce(
    (t, r) => ({
      chargedMicros: t.chargedMicros + r.chargedMicros,
      refundedMicros: t.refundedMicros + r.refundedMicros,
      spentMicros: t.spentMicros + r.spentMicros,
      tasks: t.tasks + r.tasks,
    }),
    { chargedMicros: 0, refundedMicros: 0, spentMicros: 0, tasks: 0 },
  );
  return { accountId, from: w.from, to: w.to, group, rows, total };
}

const money = (f: UsageFigures) => ({
  spent: formatUsd(f.spentMicros, 6),
  charged: formatUsd(f.chargedMicros, 6),
  refunded: formatUsd(f.refundedMicros, 6),
  spentMicros: f.spentMicros,
  tasks: f.tasks,
});

/** The JSON view (customer and admin API, CLI --json). */
export function usageView(u: Usage) {
  return {
    accountId: u.accountId,
    from: new Date(u.from).toISOString(),
    to: new Date(u.to).toISOString(),
    group: u.group,
    currency: 'USD' as const,
    total: money(u.total),
    rows: u.rows.map((r) => ({
      ...(u.group === 'day' ? { day: r.day } : u.group === 'model' ? { model: r.model } : { keyId: r.keyId, keyName: r.keyName }),
      ...money(r),
    })),
  };
}

/** CSV with a header line: the group's column(s), then spent, charged, refunded (USD) and tasks. */
export function usageCsv(u: Usage): string {
  const head = u.group === 'key' ? 'key_id,key_name' : u.group;
  const lines = [`${head},spent_usd,charged_usd,refunded_usd,tasks`];
  for (const r of u.rows) {
    const group = u.group === 'day' ? [r.day!] : u.group === 'model' ? [r.model!] : [r.keyId ?? '', r.keyName ?? ''];
    lines.push([...group, formatUsd(r.spentMicros, 6), formatUsd(r.chargedMicros, 6), formatUsd(r.refundedMicros, 6), r.tasks].map(csvField).join(','));
  }
  return `${lines.join('\n')}\n`;
}
