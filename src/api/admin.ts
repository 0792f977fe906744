import { z } from 'zod';
import { API_DIALECTS } from '../accounts/index.js';
import { entriesCsv, entryView, parseSignedUsd, parseUsd } from '../billing/index.js';
import type { Config } from '../config.js';
import { parseWith, type ErrorKind } from '../errors.js';
import type { Services } from '../services.js';
import type { Answer, Operation, Reply } from './operation.js';
import * as S from './schemas.js';
import { AdminTopups, adminTopupsQuery } from './payments.js';
import { usd } from './fields.js';
import { keyBodies, readKeyChanges, readNewKey } from './key-bodies.js';
import { reportAnswer, ReportAnswer, reportQuery, usageAnswer, UsageAnswer, usageQuery } from './usage.js';
import { Alert, alertBody } from './alerts.js';
import { callbackUrlCheck } from '../callbacks/index.js';
import { adminViewOperations } from './admin-views.js';
import { definitionOperations } from './definitions.js';

const rateLimit = z.number().int().min(1).max(1_000_000_000).nullable();
const signedUsd = z
  .union([z.string(), z.number()])
  .refine(
    (v) => parseSignedUsd(v) !== null && parseSignedUsd(v) !== 0,
    'must be a non-zero USD amount, positive to credit and negative to debit, such as "1.50" or "-2"',
  )
  .describe('Signed USD amount: positive credits, negative debits, e.g. "+1.50" or "-2" (at most 6 decimals)');

/** Admin API bodies (/admin/v1/*): the routes parse with them and the OpenAPI document shows them. */
export const adminBodies = {
  createAccount: z.object({ name: z.string().min(1).max(200), balance: usd.optional() }).strict(),
  topup: z.object({ amount: usd, note: z.string().max(500).optional() }).strict(),
  createKey: keyBodies.create,
  updateKey: keyBodies.update,
  adjust: z.object({ amount: signedUsd, reason: z.string().min(1).max(500).describe('Why: shown in the ledger') }).strict(),
  limits: z.object({ write: rateLimit.optional(), read: rateLimit.optional() }).strict(),
  dialect: z
    .object({
      dialect: z
        .enum(API_DIALECTS, { error: `must be one of ${API_DIALECTS.map((d) => JSON.stringify(d)).join(', ')}` })
        .describe('kie: tasks the account creates from now on report resultJson as a JSON string for every model (kie.ai clients); gengate: the SPEC shapes'),
    })
    .strict(),
};

/** The path parameter of /admin/v1/accounts/:id and /admin/v1/keys/:id. */
export const adminIdParams = z.object({ id: z.string().min(1).max(100) });

/** What an admin call brings (the bearer ADMIN_TOKEN is checked by the face before). */
export interface AdminCall {
  params: unknown;
  query: unknown;
  body: unknown;
  /** Who is calling, for the versions of definitions: the operator's email, or `admin-token` (with X-GenGate-Actor when sent). */
  who?: string;
}

/** One operation of the admin API: its spec and its handler. */
export interface AdminOperation {
  spec: Operation & { auth: 'admin' };
  handle(services: Services, call: AdminCall): Promise<Answer>;
}

const adminOn = (c: Config) => c.ADMIN_TOKEN !== undefined;
const env = (schema: z.ZodType, description: string): Reply => ({ schema, envelope: true, description });
const adminAccount = { id: 'The account id' };
const modelParam = { id: 'Model id or alias, URL-encoded (a slash as %2F)' };
const base = { tag: 'Admin' as const, auth: 'admin' as const, when: adminOn, errors: ['invalid_request', 'not_found'] as ErrorKind[] };
type Spec = Omit<AdminOperation['spec'], keyof typeof base> & { errors?: ErrorKind[] };
const op = (spec: Spec, handle: AdminOperation['handle']): AdminOperation => ({ spec: { ...base, ...spec }, handle });

const id = (call: AdminCall) => parseWith(adminIdParams, call.params, '').id;
// Model ids may contain a slash (vendor/name): sent URL-encoded.
const modelId = (call: AdminCall) => {
  const raw = String((call.params as { id?: string }).id ?? '');
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw; // not a model id: answered 404 like any unknown model
  }
};
const data = async (value: Promise<unknown>): Promise<Answer> => ({ data: await value });

/** The admin API (/admin/v1/*, bearer ADMIN_TOKEN); registered only when ADMIN_TOKEN is set. */
export const ADMIN_OPERATIONS: AdminOperation[] = [
  op(
    {
      method: 'post',
      path: '/admin/v1/accounts',
      id: 'adminCreateAccount',
      summary: 'Create an account and its first key',
      body: adminBodies.createAccount,
      ok: env(S.AccountCreated, 'The account and its key (shown only here)'),
    },
    (s, call) => {
      const body = parseWith(adminBodies.createAccount, call.body, '');
      return data(s.accounts.create(body.name, body.balance === undefined ? 0 : parseUsd(body.balance)!));
    },
  ),
  op({ method: 'get', path: '/admin/v1/accounts', id: 'adminListAccounts', summary: 'All accounts', ok: env(z.array(S.Account), 'Accounts') }, (s) =>
    data(s.accounts.list()),
  ),
  op(
    { method: 'get', path: '/admin/v1/accounts/:id', id: 'adminGetAccount', summary: 'One account', params: adminAccount, ok: env(S.Account, 'The account') },
    (s, call) => data(s.accounts.get(id(call))),
  ),
  op(
    {
      method: 'post',
      path: '/admin/v1/accounts/:id/disable',
      id: 'adminDisable',
      summary: 'Disable an account',
      params: adminAccount,
      ok: env(S.Account, 'The account'),
    },
    (s, call) => data(s.accounts.setStatus(id(call), 'disabled')),
  ),
  op(
    {
      method: 'post',
      path: '/admin/v1/accounts/:id/enable',
      id: 'adminEnable',
      summary: 'Enable an account',
      params: adminAccount,
      ok: env(S.Account, 'The account'),
    },
    (s, call) => data(s.accounts.setStatus(id(call), 'active')),
  ),
  op(
    {
      method: 'post',
      path: '/admin/v1/accounts/:id/topup',
      id: 'adminTopup',
      summary: 'Top up an account',
      params: adminAccount,
      body: adminBodies.topup,
      ok: env(S.Account, 'The account'),
    },
    (s, call) => {
      const body = parseWith(adminBodies.topup, call.body, '');
      return data(s.accounts.topup(id(call), parseUsd(body.amount)!, body.note ?? ''));
    },
  ),
  op(
    {
      method: 'get',
      path: '/admin/v1/topups',
      id: 'adminListTopups',
      summary: 'Card top-ups with their refunds, disputes and unpaid remainders (decision 1904)',
      query: adminTopupsQuery,
      ok: env(AdminTopups, 'Top-ups, newest first (at most 100), the unpaid total and reversals waiting for their top-up'),
    },
    (s, call) => data(s.payments.topups.listAll(parseWith(adminTopupsQuery, call.query, '').accountId)),
  ),
  op(
    {
      method: 'post',
      path: '/admin/v1/accounts/:id/limits',
      id: 'adminLimits',
      summary: "Set the account's per-key rate limits",
      params: adminAccount,
      body: adminBodies.limits,
      ok: env(S.Account, 'The account'),
    },
    (s, call) => data(s.accounts.setLimits(id(call), parseWith(adminBodies.limits, call.body, ''))),
  ),
  op(
    {
      method: 'get',
      path: '/admin/v1/accounts/:id/alert',
      id: 'adminGetAlert',
      summary: "The account's low-balance alert",
      params: adminAccount,
      ok: env(Alert, 'The alert settings'),
    },
    (s, call) => data(s.alerts.get(id(call))),
  ),
  op(
    {
      method: 'post',
      path: '/admin/v1/accounts/:id/alert',
      id: 'adminSetAlert',
      summary: "Set the account's low-balance alert (level, url, email); a missing field keeps its value",
      params: adminAccount,
      body: alertBody,
      ok: env(Alert, 'The alert settings'),
    },
    (s, call) => data(s.alerts.set(id(call), parseWith(alertBody, call.body, ''), callbackUrlCheck(s.guard, 'url'))),
  ),
  op(
    {
      method: 'post',
      path: '/admin/v1/accounts/:id/dialect',
      id: 'adminDialect',
      summary: "Set the account's dialect (the resultJson shape of the tasks it creates from now on)",
      params: adminAccount,
      body: adminBodies.dialect,
      ok: env(S.Account, 'The account'),
    },
    (s, call) => data(s.accounts.setDialect(id(call), parseWith(adminBodies.dialect, call.body, '').dialect)),
  ),
  op(
    {
      method: 'post',
      path: '/admin/v1/accounts/:id/keys',
      id: 'adminCreateKey',
      summary: 'Create an API key',
      params: adminAccount,
      body: adminBodies.createKey,
      ok: env(S.KeyCreated, 'The key and its secret (shown only here)'),
    },
    (s, call) => data(s.accounts.createKey(id(call), readNewKey(call.body))),
  ),
  op(
    {
      method: 'post',
      path: '/admin/v1/keys/:id',
      id: 'adminUpdateKey',
      summary: "Change a key's name, expiry or budget",
      params: { id: 'The key id' },
      body: adminBodies.updateKey,
      ok: env(S.ApiKey, 'The key with its spend in the current period'),
    },
    (s, call) => data(s.accounts.updateKey(id(call), readKeyChanges(call.body))),
  ),
  op(
    {
      method: 'post',
      path: '/admin/v1/accounts/:id/adjustments',
      id: 'adminAdjust',
      summary: 'Credit or debit an account with a reason (never below zero)',
      params: adminAccount,
      body: adminBodies.adjust,
      ok: env(S.Account, 'The account'),
      errors: ['invalid_request', 'missing_field', 'not_found', 'conflict'],
    },
    (s, call) => {
      const body = parseWith(adminBodies.adjust, call.body, '');
      return data(s.accounts.adjust(id(call), parseSignedUsd(body.amount)!, body.reason));
    },
  ),
  op(
    {
      method: 'get',
      path: '/admin/v1/accounts/:id/keys',
      id: 'adminListKeys',
      summary: 'Keys of an account',
      params: adminAccount,
      ok: env(z.array(S.ApiKey), 'Keys (never the secret)'),
    },
    (s, call) => data(s.accounts.listKeys(id(call))),
  ),
  op(
    {
      method: 'get',
      path: '/admin/v1/models',
      id: 'adminListModels',
      summary: 'Every model with its enabled switch',
      ok: env(z.array(S.ModelSwitch), 'Models'),
    },
    (s) => data(s.models.list()),
  ),
  op(
    {
      method: 'get',
      path: '/admin/v1/routes',
      id: 'adminListRoutes',
      summary: 'Every upstream route with its breaker and, for kie routes, the kie.ai credit left',
      ok: env(z.array(S.RouteStatus), 'Upstream routes in catalog order, as this process sees them (account null on a process that runs no engine)'),
    },
    (s) => Promise.resolve({ data: s.routeHealth.details(s.fileCatalog) }),
  ),
  op(
    {
      method: 'post',
      path: '/admin/v1/models/:id/disable',
      id: 'adminDisableModel',
      summary: 'Disable a model (createTask answers 505)',
      params: modelParam,
      ok: env(S.ModelSwitch, 'The model'),
    },
    (s, call) => data(s.models.set(modelId(call), false)),
  ),
  op(
    {
      method: 'post',
      path: '/admin/v1/models/:id/enable',
      id: 'adminEnableModel',
      summary: 'Enable a model',
      params: modelParam,
      ok: env(S.ModelSwitch, 'The model'),
    },
    (s, call) => data(s.models.set(modelId(call), true)),
  ),
  op(
    {
      method: 'post',
      path: '/admin/v1/keys/:id/revoke',
      id: 'adminRevokeKey',
      summary: 'Revoke a key',
      params: { id: 'The key id' },
      ok: env(S.ApiKey, 'The key'),
    },
    (s, call) => data(s.accounts.revokeKey(id(call))),
  ),
  op(
    {
      method: 'get',
      path: '/admin/v1/accounts/:id/ledger',
      id: 'adminLedger',
      summary: 'Ledger of an account (?format=csv for CSV)',
      params: adminAccount,
      query: z.object({ format: z.enum(['json', 'csv']).optional() }),
      ok: env(z.array(S.LedgerEntry), 'Ledger entries, oldest first'),
    },
    async (s, call) => {
      const entries = await s.accounts.ledgerEntries(id(call));
      // Anything but csv answers JSON, as it always has.
      if ((call.query as { format?: string }).format === 'csv') return { body: entriesCsv(entries), type: 'text/csv; charset=utf-8' };
      return { data: entries.map(entryView) };
    },
  ),
  op(
    {
      method: 'get',
      path: '/admin/v1/accounts/:id/usage',
      id: 'adminUsage',
      summary: "An account's spend per UTC day, model or key, net of refunds (?format=csv for CSV; as GET /api/v1/usage)",
      params: adminAccount,
      query: usageQuery,
      ok: env(UsageAnswer, 'Spend per group, with the total (format=csv: text/csv)'),
    },
    async (s, call) => {
      const account = await s.accounts.get(id(call));
      return usageAnswer(s, account.id, call.query);
    },
  ),
  op(
    {
      method: 'get',
      path: '/admin/v1/report',
      id: 'adminReport',
      summary: 'The money report: every movement of the balances per UTC day or month, and the reconciliation (?format=csv for CSV)',
      description:
        'Top-ups (operator and card), charges, refunds (full and partial), adjustments (credits and debits), Stripe refunds and disputes with their unpaid remainders; opening + movements = closing = the sum of the balances at the end of the period. Default period: the last 30 UTC days; at most 366 days by day, 3660 by month.',
      query: reportQuery,
      ok: env(ReportAnswer, 'The report (format=csv: text/csv, one line per period and a total line)'),
    },
    (s, call) => reportAnswer(s, call.query),
  ),
  ...adminViewOperations(base),
  ...definitionOperations(base),
];
