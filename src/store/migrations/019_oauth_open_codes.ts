import { sql, type Kysely } from 'kysely';

/**
 * The authorization codes still open (neither exchanged nor revoked), by expiry: the engine's sweep
 * ends the grant of a code that expired unexchanged (decision 2202, amended), and reads only these
 * few rows instead of every token ever issued. The sweep spells the predicate exactly as here,
 * literally (src/oauth/grants.ts), so both databases can prove it. Frozen text, like every released
 * migration: see 006.
 */
const STATEMENTS = ["create index oauth_tokens_open_codes on oauth_tokens (expires_at) where kind = 'code' and used_at is null and revoked_at is null"];

export async function up(db: Kysely<any>): Promise<void> {
  for (const text of STATEMENTS) await sql.raw(text).execute(db);
}
