import type { Kysely } from 'kysely';
import type { DB } from '../store/index.js';
import { revokeKeyIn } from './custody.js';

/**
 * Ends the live OAuth grants of an account (or of one member of it) inside the caller's
 * transaction: each grant, every token of it (access and refresh) and its key are revoked at `at`,
 * as oauth/ `endGrant` does for one grant. Called when a member is removed and when an account is
 * disabled (decision 2315), so neither a removed member's client nor a disabled account's keeps a
 * token that works again later. Returns how many grants it ended.
 */
export async function endGrantsOf(trx: Kysely<DB>, of: { accountId: string; memberId?: string }, at: number): Promise<number> {
  let q = trx.selectFrom('oauth_grants').select(['id', 'account_id', 'key_id']).where('account_id', '=', of.accountId).where('revoked_at', 'is', null);
  if (of.memberId !== undefined) q = q.where('member_id', '=', of.memberId);
  const grants = await q.execute();
  for (const grant of grants) {
    await trx.updateTable('oauth_grants').set({ revoked_at: at }).where('id', '=', grant.id).where('revoked_at', 'is', null).execute();
    await trx.updateTable('oauth_tokens').set({ revoked_at: at }).where('grant_id', '=', grant.id).where('revoked_at', 'is', null).execute();
    await revokeKeyIn(trx, grant, at);
  }
  return grants.length;
}
