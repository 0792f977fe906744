import { sql, type Kysely } from 'kysely';
import type { DB } from '../store/index.js';
import { formatUsd } from './money.js';
import { csvField, dayText, DAY_MS, monthText, type Window } from './window.js';

export const REPORT_PERIODS = ['day', 'month'] as const;
export type ReportPeriod = (typeof REPORT_PERIODS)[number];

/** The movements of one period by where they come from (signed micro-USD: money in positive, out negative). */
export interface Movements {
  operatorTopups: number;
  cardTopups: number;
  charges: number;
  refunds: number;
  partialRefunds: number;
  credits: number;
  debits: number;
  stripeRefunds: number;
  stripeDisputes: number;
  /** Given back by won disputes (what they had debited). */
  stripeDisputesWon: number;
}
const MOVEMENTS: Array<keyof Movements> = [
  'operatorTopups',
  'cardTopups',
  'charges',
  'refunds',
  'partialRefunds',
  'credits',
  'debits',
  'stripeRefunds',
  'stripeDisputes',
  'stripeDisputesWon',
];
const none = (): Movements => ({
  operatorTopups: 0,
  cardTopups: 0,
  charges: 0,
  refunds: 0,
  partialRefunds: 0,
  credits: 0,
  debits: 0,
  stripeRefunds: 0,
  stripeDisputes: 0,
  stripeDisputesWon: 0,
});

export interface ReportPeriodRow {
  period: string;
  from: number;
  to: number;
  opening: number;
  movements: Movements;
  /**
   * Refunded or disputed card money the balances could not cover (not a ledger movement: the
   * operator's loss), less the remainders of disputes won in the period (which can make it negative).
   */
  unpaid: number;
  /**
   * Stripe's fees of the card top-ups paid in the period, as far as known (not a ledger movement:
   * the balance was credited the whole payment), the top-ups whose fee is not known yet, and what
   * those top-ups paid (fees + the net Stripe pays out for them).
   */
  fees: number;
  feesPending: number;
  cardPaid: number;
  net: number;
  closing: number;
}
export interface MoneyReport {
  from: number;
  to: number;
  by: ReportPeriod;
  periods: ReportPeriodRow[];
  total: Omit<ReportPeriodRow, 'period'>;
  /** Every account's balance now, and the ledger's movements since the end of the period. */
  balancesNow: number;
  movementsAfter: number;
  /** The sum of the accounts' balances at the end of the period: now less what moved since. */
  balancesAtEnd: number;
  /** The ledger's closing total equals balancesAtEnd. */
  reconciled: boolean;
}

interface Raw {
  part: string;
  d: string | number | null;
  kind: string | null;
  source: string | null;
  neg: string | number | null;
  s: string | number | null;
}

const DAY = sql.lit(DAY_MS);

/**
 * One statement, so one snapshot on both databases: the movements of the period by UTC day, kind,
 * source and sign (a range of ledger_time, migration 014), the ledger total before and after it,
 * every balance now, the unpaid remainders recorded in the period, and the card top-ups paid in the
 * period (a range of topups_paid, migration 020) with Stripe's known fees and the count of those
 * not known (`neg`).
 */
const reportQuery = (w: Window) => sql<Raw>`
  select 'm' as part, created_at / ${DAY} as d, kind, source, case when amount_micros < 0 then 1 else 0 end as neg, sum(amount_micros) as s
    from ledger_entries where created_at >= ${w.from} and created_at < ${w.to} group by 2, 3, 4, 5
  union all select 'before', null, null, null, null, coalesce(sum(amount_micros), 0) from ledger_entries where created_at < ${w.from}
  union all select 'after', null, null, null, null, coalesce(sum(amount_micros), 0) from ledger_entries where created_at >= ${w.to}
  union all select 'balances', null, null, null, null, coalesce(sum(balance_micros), 0) from accounts
  union all select 'unpaid', applied_at / ${DAY}, null, null, null, sum(unpaid_micros)
    from topup_reversals where applied = 1 and applied_at >= ${w.from} and applied_at < ${w.to} group by 2
  union all select 'fees', paid_at / ${DAY}, null, null, sum(case when fee_micros is null then 1 else 0 end), sum(coalesce(fee_micros, 0))
    from topups where paid_at >= ${w.from} and paid_at < ${w.to} group by 2
  union all select 'paid', paid_at / ${DAY}, null, null, null, sum(paid_micros)
    from topups where paid_at >= ${w.from} and paid_at < ${w.to} group by 2`;

/** Which movement a group of entries is. */
function movementOf(kind: string | null, source: string | null, negative: boolean): keyof Movements {
  if (kind === 'topup') return source === 'card' ? 'cardTopups' : 'operatorTopups';
  if (kind === 'charge') return 'charges';
  if (kind === 'refund') return 'refunds';
  if (kind === 'partial_refund') return 'partialRefunds';
  if (source === 'stripe_refund') return 'stripeRefunds';
  if (source === 'stripe_dispute') return 'stripeDisputes';
  if (source === 'stripe_dispute_won') return 'stripeDisputesWon';
  return negative ? 'debits' : 'credits';
}

/** Where the period of `at` begins and ends (UTC day or month), clipped to the window. */
function bucketOf(at: number, by: ReportPeriod, w: Window): { key: string; from: number; to: number } {
  if (by === 'day') {
    const start = Math.floor(at / DAY_MS) * DAY_MS;
    return { key: dayText(start), from: Math.max(start, w.from), to: Math.min(start + DAY_MS, w.to) };
  }
  const d = new Date(at);
  const start = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
  const next = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
  return { key: monthText(start), from: Math.max(start, w.from), to: Math.min(next, w.to) };
}

const num = (v: string | number | null | undefined) => Number(v ?? 0);

/** The operator's money report: every account's movements per UTC day or month, and the reconciliation. */
export async function moneyReport(db: Kysely<DB>, w: Window, by: ReportPeriod): Promise<MoneyReport> {
  const { rows } = await reportQuery(w).execute(db);
  const scalar = (part: string) => num(rows.find((r) => r.part === part)?.s);
  // Every period of the window, in order, with zeros where nothing moved.
  const periods: ReportPeriodRow[] = [];
  const index = new Map<string, ReportPeriodRow>();
  for (let at = w.from; at < w.to;) {
    const b = bucketOf(at, by, w);
    const row: ReportPeriodRow = {
      period: b.key,
      from: b.from,
      to: b.to,
      opening: 0,
      movements: none(),
      unpaid: 0,
      fees: 0,
      feesPending: 0,
      cardPaid: 0,
      net: 0,
      closing: 0,
    };
    periods.push(row);
    index.set(b.key, row);
    at = b.to;
  }
  for (const r of rows) {
    if (r.part !== 'm' && r.part !== 'unpaid' && r.part !== 'fees' && r.part !== 'paid') continue;
    const row = index.get(bucketOf(num(r.d) * DAY_MS, by, w).key)!;
    if (r.part === 'unpaid') row.unpaid += num(r.s);
    else if (r.part === 'fees') {
      row.fees += num(r.s);
      row.feesPending += num(r.neg);
    } else if (r.part === 'paid') row.cardPaid += num(r.s);
    else row.movements[movementOf(r.kind, r.source, num(r.neg) === 1)] += num(r.s);
  }
  const before = scalar('before');
  let running = before;
  const sums = none();
  let unpaid = 0;
  const card = { fees: 0, feesPending: 0, cardPaid: 0 };
  for (const row of periods) {
    row.opening = running;
    row.net = MOVEMENTS.reduce((s, k) => s + row.movements[k], 0);
    row.closing = running + row.net;
    running = row.closing;
    for (const k of MOVEMENTS) sums[k] += row.movements[k];
    unpaid += row.unpaid;
    card.fees += row.fees;
    card.feesPending += row.feesPending;
    card.cardPaid += row.cardPaid;
  }
  const balancesNow = scalar('balances');
  const movementsAfter = scalar('after');
  const balancesAtEnd = balancesNow - movementsAfter;
  return {
    from: w.from,
    to: w.to,
    by,
    periods,
    total: { from: w.from, to: w.to, opening: before, movements: sums, unpaid, ...card, net: running - before, closing: running },
    balancesNow,
    movementsAfter,
    balancesAtEnd,
    reconciled: running === balancesAtEnd,
  };
}

const usd = (micros: number) => formatUsd(micros, 6);

function periodView(r: Omit<ReportPeriodRow, 'period'>) {
  const m = r.movements;
  return {
    from: new Date(r.from).toISOString(),
    to: new Date(r.to).toISOString(),
    opening: usd(r.opening),
    topups: { operator: usd(m.operatorTopups), card: usd(m.cardTopups) },
    charges: usd(m.charges),
    refunds: { full: usd(m.refunds), partial: usd(m.partialRefunds) },
    adjustments: { credits: usd(m.credits), debits: usd(m.debits) },
    stripe: {
      refunds: usd(m.stripeRefunds),
      disputes: usd(m.stripeDisputes),
      disputesWon: usd(m.stripeDisputesWon),
      unpaid: usd(r.unpaid),
      fees: usd(r.fees),
      feesPending: r.feesPending,
      net: usd(r.cardPaid - r.fees),
    },
    net: usd(r.net),
    closing: usd(r.closing),
  };
}

/** The JSON view (admin API, CLI --json). Amounts are signed USD: money into balances positive, out of them negative. */
export function reportView(r: MoneyReport) {
  return {
    from: new Date(r.from).toISOString(),
    to: new Date(r.to).toISOString(),
    by: r.by,
    currency: 'USD' as const,
    periods: r.periods.map((p) => ({ period: p.period, ...periodView(p) })),
    total: periodView(r.total),
    reconciliation: {
      opening: usd(r.total.opening),
      movements: usd(r.total.net),
      closing: usd(r.total.closing),
      balancesAtEnd: usd(r.balancesAtEnd),
      balancesNow: usd(r.balancesNow),
      movementsAfter: usd(r.movementsAfter),
      reconciled: r.reconciled,
    },
  };
}

const CSV_HEAD =
  'period,from,to,opening_usd,operator_topups_usd,card_topups_usd,charges_usd,refunds_usd,partial_refunds_usd,credits_usd,debits_usd,' +
  'stripe_refunds_usd,stripe_disputes_usd,stripe_disputes_won_usd,unpaid_usd,stripe_fees_usd,stripe_fees_pending,card_net_usd,net_usd,closing_usd,' +
  'balances_at_end_usd,reconciled';

/** CSV: one line per period, then a `total` line with the sum of balances at the end and whether it reconciles. */
export function reportCsv(r: MoneyReport): string {
  const line = (row: Omit<ReportPeriodRow, 'period'>, period: string, end: string[]) => {
    const m = row.movements;
    const amounts = [row.opening, ...MOVEMENTS.map((k) => m[k]), row.unpaid].map(usd);
    const card = [usd(row.fees), String(row.feesPending), usd(row.cardPaid - row.fees)];
    return [period, new Date(row.from).toISOString(), new Date(row.to).toISOString(), ...amounts, ...card, usd(row.net), usd(row.closing), ...end]
      .map(csvField)
      .join(',');
  };
  const lines = [CSV_HEAD, ...r.periods.map((p) => line(p, p.period, ['', ''])), line(r.total, 'total', [usd(r.balancesAtEnd), String(r.reconciled)])];
  return `${lines.join('\n')}\n`;
}
