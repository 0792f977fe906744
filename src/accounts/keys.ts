import { createHash, randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { DB, ApiKeysTable, KeyBudgetPeriod } from '../store/index.js';
import { formatUsd } from '../billing/index.js';
import { randomId } from '../ids.js';
import type { KeyBudget } from './budgets.js';

/**
 * The scopes a key may be limited to (DECISIONS §12; `billing`: start card top-ups, decision 1904;
 * `keys:read` and `keys:write`: list and manage the account's keys, decision 1907).
 * A key with no scopes list may do everything.
 */
export const SCOPES = ['tasks:write', 'tasks:read', 'files:write', 'balance:read', 'billing', 'keys:read', 'keys:write'] as const;
export type Scope = (typeof SCOPES)[number];

/** What an operator sees of a key; never the key itself or its hash. */
export interface KeyView {
  id: string;
  accountId: string;
  name: string;
  prefix: string;
  scopes: Scope[] | null;
  models: string[] | null;
  createdAt: string;
  revokedAt: string | null;
  lastUsedAt: string | null;
  /** After this time the key answers 401; null: never. */
  expiresAt: string | null;
  /** The spend limit, or null (only the balance limits the key). */
  budget: { amount: string; amountMicros: number; period: KeyBudgetPeriod } | null;
  /** Who made the key: a member id, a key id, or null for the operator (decision 1907). */
  createdBy: string | null;
  /** Spent in the budget's current period (in total without a budget): charges less their refunds. Only in lists and updates. */
  spent?: string;
  spentMicros?: number;
  /** What the budget still allows in its current period; null without a budget. Only in lists and updates. */
  remaining?: string | null;
}

/** A new secret key: `gg_` + 192 random bits in base64url. */
export function newSecret(): string {
  return `gg_${randomBytes(24).toString('base64url')}`;
}

/** Keys are stored and looked up only by this hash. */
export function hashKey(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

const iso = (ms: number | null) => (ms == null ? null : new Date(Number(ms)).toISOString());

/** Row to operator view. */
export function keyView(row: ApiKeysTable): KeyView {
  return {
    id: row.id,
    accountId: row.account_id,
    name: row.name,
    prefix: row.prefix,
    scopes: row.scopes ? (JSON.parse(row.scopes) as Scope[]) : null,
    models: row.models ? (JSON.parse(row.models) as string[]) : null,
    createdAt: iso(row.created_at)!,
    revokedAt: iso(row.revoked_at),
    lastUsedAt: iso(row.last_used_at),
    expiresAt: iso(row.expires_at),
    createdBy: row.created_by ?? null,
    budget: budgetOf(row) && { amount: formatUsd(Number(row.budget_micros), 4), amountMicros: Number(row.budget_micros), period: row.budget_period! },
  };
}

/** The key's budget from its row, or null. */
export function budgetOf(row: Pick<ApiKeysTable, 'budget_micros' | 'budget_period'>): KeyBudget | null {
  return row.budget_micros == null || row.budget_period == null ? null : { micros: Number(row.budget_micros), period: row.budget_period };
}

/** What a key is made with besides its account. */
export interface KeyOptions {
  name: string;
  scopes?: Scope[] | null;
  models?: string[] | null;
  expiresAt?: number | null;
  budget?: KeyBudget | null;
  /** The member or key that makes it; null or missing: the operator. */
  createdBy?: string | null;
}

/** Inserts a key for the account inside the caller's transaction; returns the row and the secret (shown once). */
export async function insertKey(trx: Kysely<DB>, accountId: string, opts: KeyOptions, now: number): Promise<{ row: ApiKeysTable; secret: string }> {
  const secret = newSecret();
  const row: ApiKeysTable = {
    id: randomId('key_', 9),
    account_id: accountId,
    hash: hashKey(secret),
    prefix: `${secret.slice(0, 7)}…`,
    scopes: opts.scopes && opts.scopes.length ? JSON.stringify(opts.scopes) : null,
    models: opts.models && opts.models.length ? JSON.stringify(opts.models) : null,
    created_at: now,
    revoked_at: null,
    last_used_at: null,
    name: opts.name,
    expires_at: opts.expiresAt ?? null,
    budget_micros: opts.budget?.micros ?? null,
    budget_period: opts.budget?.period ?? null,
    created_by: opts.createdBy ?? null,
  };
  await trx.insertInto('api_keys').values(row).execute();
  return { row, secret };
}
