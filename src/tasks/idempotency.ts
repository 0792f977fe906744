import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import { Errors, shown } from '../errors.js';
import type { DB } from '../store/index.js';
import { IDEMPOTENCY_TTL_MS } from './states.js';

/** SPEC Limits: at most 128 characters. */
export const MAX_IDEMPOTENCY_KEY = 128;

/** JSON with object keys sorted at every level, so equal bodies hash equally whatever their key order. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : v,
  );
}

/** The hash that decides "same body" (DECISIONS §8: compared after JSON canonicalisation). */
export function bodyHash(body: unknown): string {
  return createHash('sha256').update(canonical(body)).digest('hex');
}

/**
 * The task bound to (account, key) in the last 24 hours, if the body matches; throws 400 when the
 * key was used with another body. Returns null when the key is free (a stale binding is removed).
 */
export async function boundTask(trx: Kysely<DB>, accountId: string, key: string, hash: string, now: number, removeStale: boolean): Promise<string | null> {
  const row = await trx
    .selectFrom('idempotency_keys')
    .select(['body_hash', 'task_id', 'created_at'])
    .where('account_id', '=', accountId)
    .where('key', '=', key)
    .executeTakeFirst();
  if (!row) return null;
  if (Number(row.created_at) <= now - IDEMPOTENCY_TTL_MS) {
    if (removeStale) await trx.deleteFrom('idempotency_keys').where('account_id', '=', accountId).where('key', '=', key).execute();
    return null;
  }
  if (row.body_hash !== hash) {
    throw Errors.invalid(
      `Idempotency-Key ${shown(key)} was already used with a different request body in the last 24 hours (task ${row.task_id}); send a new key for a new request`,
    );
  }
  return row.task_id;
}
