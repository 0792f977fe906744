import { createHash, randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { DB, ApiKeysTable } from '../store/index.js';
import { randomId } from '../ids.js';

/**
 * The scopes a key may be limited to (DECISIONS §12; `billing`: start card top-ups, decision 1904).
 * A key with no scopes list may do everything.
 */
export const SCOPES = ['tasks:write', 'tasks:read', 'files:write', 'balance:read', 'billing'] as const;
export type Scope = (typeof SCOPES)[number];

/** What an operator sees of a key; never the key itself or its hash. */
export interface KeyView {
  id: string;
  accountId: string;
  prefix: string;
  scopes: Scope[] | null;
  models: string[] | null;
  createdAt: string;
  revokedAt: string | null;
  lastUsedAt: string | null;
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
    prefix: row.prefix,
    scopes: row.scopes ? (JSON.parse(row.scopes) as Scope[]) : null,
    models: row.models ? (JSON.parse(row.models) as string[]) : null,
    createdAt: iso(row.created_at)!,
    revokedAt: iso(row.revoked_at),
    lastUsedAt: iso(row.last_used_at),
  };
}

/** Inserts a key for the account inside the caller's transaction; returns the row and the secret (shown once). */
export async function insertKey(
  trx: Kysely<DB>,
  accountId: string,
  opts: { scopes?: Scope[] | null; models?: string[] | null },
  now: number,
): Promise<{ row: ApiKeysTable; secret: string }> {
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
  };
  await trx.insertInto('api_keys').values(row).execute();
  return { row, secret };
}
