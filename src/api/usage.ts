import { z } from 'zod';
import { moneyReport, readWindow, reportCsv, reportView, REPORT_PERIODS, USAGE_GROUPS, usageCsv, usageOf, usageView } from '../billing/index.js';
import { Errors, parseWith } from '../errors.js';
import type { Services } from '../services.js';
import type { Answer, KeyedOperation } from './operation.js';

const usd6 = z.string().describe('Signed USD with 6 decimals, e.g. "-1.250000"');
const time = (what: string) =>
  z.string().max(40).optional().describe(`${what}: a date such as "2026-11-01" (UTC; as \`to\`, its whole day counts) or an ISO 8601 time with its zone`);
const format = z.enum(['json', 'csv'], { error: 'must be "json" or "csv"' }).optional().describe('json (the default) or csv (text/csv with a header line)');

/** The usage query (customer and admin): the period, the grouping, the format. */
export const usageQuery = z.object({
  from: time('Start of the period (default: 29 days before `to`)'),
  to: time('End of the period (default: today, UTC)'),
  group: z
    .enum(USAGE_GROUPS, { error: `must be one of ${USAGE_GROUPS.map((g) => JSON.stringify(g)).join(', ')}` })
    .optional()
    .describe('day (the default; every UTC day of the period), model or key'),
  format,
});
export const reportQuery = z.object({
  from: time('Start of the period (default: 29 days before `to`)'),
  to: time('End of the period (default: today, UTC)'),
  by: z
    .enum(REPORT_PERIODS, { error: `must be one of ${REPORT_PERIODS.map((g) => JSON.stringify(g)).join(', ')}` })
    .optional()
    .describe('day (the default) or month: the periods of the report, in UTC'),
  format,
});

const figures = {
  spent: usd6.describe('Charged less refunded in the period'),
  charged: usd6,
  refunded: usd6.describe('Full and partial refunds made in the period'),
  spentMicros: z.number().int(),
  tasks: z.number().int().describe('Charges (tasks created) in the period'),
};
export const UsageAnswer = z.object({
  accountId: z.string(),
  from: z.string(),
  to: z.string().describe('End of the period (exclusive)'),
  group: z.enum(USAGE_GROUPS),
  currency: z.literal('USD'),
  total: z.object(figures),
  rows: z.array(
    z.object({
      day: z.string().optional(),
      model: z.string().optional(),
      keyId: z.string().nullable().optional().describe('null: charges made without a key (a member signed in)'),
      keyName: z.string().nullable().optional(),
      ...figures,
    }),
  ),
});
const movements = {
  from: z.string(),
  to: z.string(),
  opening: usd6.describe('Sum of all balances at the start'),
  topups: z.object({ operator: usd6, card: usd6 }),
  charges: usd6,
  refunds: z.object({ full: usd6, partial: usd6 }),
  adjustments: z.object({ credits: usd6, debits: usd6 }).describe("The operator's adjustments"),
  stripe: z.object({
    refunds: usd6.describe('Debited for Stripe refunds of card top-ups'),
    disputes: usd6.describe('Debited for Stripe disputes'),
    disputesWon: usd6.describe('Credited back for Stripe disputes won (what they had debited)'),
    unpaid: usd6.describe('What refunds and disputes could not debit, less the remainders of disputes won (not a movement of the balances)'),
    fees: usd6.describe(
      "Stripe's fees of the card top-ups paid in the period, as far as known (not a movement of the balances: they were credited the whole payment)",
    ),
    feesPending: z.number().int().describe('Card top-ups paid in the period whose fee Stripe has not given yet (fetched after the credit, retried)'),
    net: usd6.describe('Card top-ups paid in the period less the known fees: what Stripe pays out for them'),
  }),
  net: usd6,
  closing: usd6.describe('Sum of all balances at the end'),
};
export const ReportAnswer = z.object({
  from: z.string(),
  to: z.string(),
  by: z.enum(REPORT_PERIODS),
  currency: z.literal('USD'),
  periods: z.array(z.object({ period: z.string().describe('YYYY-MM-DD or YYYY-MM'), ...movements })),
  total: z.object(movements),
  reconciliation: z.object({
    opening: usd6,
    movements: usd6,
    closing: usd6,
    balancesAtEnd: usd6.describe("The accounts' balances now less what the ledger moved since the end"),
    balancesNow: usd6,
    movementsAfter: usd6,
    reconciled: z.boolean().describe('closing equals balancesAtEnd'),
  }),
});

/** Refuses a query parameter the operation does not take (a misspelt `grop=model` must not answer by day). */
function known(schema: z.ZodObject, value: unknown, what: string): void {
  const unknown = Object.keys(value && typeof value === 'object' ? value : {}).find((k) => !Object.hasOwn(schema.shape, k));
  if (unknown !== undefined) throw Errors.invalid(`unknown query parameter ${JSON.stringify(unknown)}; ${what} takes ${Object.keys(schema.shape).join(', ')}`);
}

const CSV = 'text/csv; charset=utf-8';

/** Usage of one account (customer and admin faces). */
export async function usageAnswer(services: Services, accountId: string, query: unknown): Promise<Answer> {
  known(usageQuery, query, 'usage');
  const q = parseWith(usageQuery, query, '');
  const window = readWindow(q, services.clock.now(), { defaultDays: 30, maxDays: 366 });
  const usage = await usageOf(services.database.db, accountId, window, q.group ?? 'day');
  return q.format === 'csv' ? { body: usageCsv(usage), type: CSV } : { data: usageView(usage) };
}

/** The operator's money report. */
export async function reportAnswer(services: Services, query: unknown): Promise<Answer> {
  known(reportQuery, query, 'the report');
  const q = parseWith(reportQuery, query, '');
  const by = q.by ?? 'day';
  const window = readWindow(q, services.clock.now(), { defaultDays: 30, maxDays: by === 'day' ? 366 : 3660 });
  const report = await moneyReport(services.database.db, window, by);
  return q.format === 'csv' ? { body: reportCsv(report), type: CSV } : { data: reportView(report) };
}

/** GET /api/v1/usage: the account's spend per UTC day, model or key, net of refunds. */
export const usage: KeyedOperation = {
  spec: {
    method: 'get',
    path: '/api/v1/usage',
    id: 'usage',
    tag: 'Account',
    auth: 'key',
    scope: 'balance:read',
    summary: "The account's spend per UTC day, model or key over a period, net of refunds (?format=csv for CSV)",
    description:
      'From the ledger: charges less the full and partial refunds made in the period (a refund counts on the day it was made). Default period: the last 30 UTC days, today included; at most 366 days.',
    query: usageQuery,
    ok: { schema: UsageAnswer, envelope: true, description: 'Spend per group, with the total (format=csv: text/csv)' },
    errors: ['invalid_request'],
  },
  handler:
    (services) =>
    ({ principal, query }) =>
      usageAnswer(services, principal.accountId, query),
};
