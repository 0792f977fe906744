import { sql, type Kysely } from 'kysely';
import { revokeKeyIn } from '../accounts/index.js';
import { dialectOf, type Database, type DB, type OAuthGrantsTable } from '../store/index.js';

/** Codes looked at per sweep (the sweep runs every few seconds; a larger backlog goes in the next ones). */
const BATCH = 100;

/** The open authorization codes (neither exchanged nor revoked), spelled exactly as index oauth_tokens_open_codes (migration 019). */
const OPEN_CODE_SQL = "kind = 'code' and used_at is null and revoked_at is null";

/**
 * Ends a grant inside the caller's transaction: the grant, every token of it and its key are
 * revoked at `at` (what was revoked already keeps its first time), so nothing of it stays usable
 * and the grant list and the key list both say so.
 */
export async function endGrant(trx: Kysely<DB>, grant: Pick<OAuthGrantsTable, 'id' | 'account_id' | 'key_id'>, at: number): Promise<void> {
  await trx.updateTable('oauth_grants').set({ revoked_at: at }).where('id', '=', grant.id).where('revoked_at', 'is', null).execute();
  await trx.updateTable('oauth_tokens').set({ revoked_at: at }).where('grant_id', '=', grant.id).where('revoked_at', 'is', null).execute();
  await revokeKeyIn(trx, { id: grant.key_id, account_id: grant.account_id }, at);
}

/** endGrant for a grant known by its id. */
export async function endGrantById(trx: Kysely<DB>, grantId: string, at: number): Promise<void> {
  await endGrant(trx, await trx.selectFrom('oauth_grants').select(['id', 'account_id', 'key_id']).where('id', '=', grantId).executeTakeFirstOrThrow(), at);
}

/**
 * The engine's sweep of consents never completed (decision 2202, amended): a grant whose code
 * expired unexchanged (the tab was closed, the client crashed, every exchange failed) never got a
 * token (only the exchange that uses the code issues them), and it ends as of the code's expiry,
 * key included. One transaction per batch; on PostgreSQL the codes are taken FOR UPDATE SKIP
 * LOCKED, so several workers share the backlog, and an exchange racing the sweep finds the code
 * revoked (its own update is a compare-and-set: oauth.ts `spend`). Returns how many grants it ended.
 */
export async function endUnexchangedConsents(database: Database, now: number): Promise<number> {
  // Usually there is none: a read, and no write transaction (SQLite's write lock) for nothing.
  if (!(await dueCodes(database.db, now).limit(1).executeTakeFirst())) return 0;
  return database.tx(async (trx) => {
    let due = dueCodes(trx, now).limit(BATCH);
    if (dialectOf(trx) === 'postgres') due = due.forUpdate().skipLocked();
    const codes = await due.execute();
    for (const code of codes) await endGrantById(trx, code.grant_id, Number(code.expires_at));
    return codes.length;
  });
}

/** Open codes expired by `now`, oldest first; reads the partial index oauth_tokens_open_codes. */
function dueCodes(db: Kysely<DB>, now: number) {
  return db
    .selectFrom('oauth_tokens')
    .select(['grant_id', 'expires_at'])
    .where(sql.raw<boolean>(OPEN_CODE_SQL))
    .where('expires_at', '<=', now)
    .orderBy('expires_at');
}
