import { sql, type Kysely } from 'kysely';

/**
 * Keys record who made them (decision 1907): `created_by` is the member id (`mem_...`) of a
 * member who made the key through the customer API, the key id (`key_...`) of a key that made it,
 * or null for the operator (CLI, admin API) and for keys made before this migration. A member
 * manages the keys they made and the keys those made; revoking a key revokes the keys it made.
 * Frozen text, like every released migration: see 006.
 */
const STATEMENTS = ['alter table api_keys add column created_by text'];

export async function up(db: Kysely<any>): Promise<void> {
  for (const text of STATEMENTS) await sql.raw(text).execute(db);
}
