import { sql, type Kysely } from 'kysely';

/**
 * Keys get a name, an optional expiry and an optional spend limit (DECISIONS §22); ledger entries
 * record the key that made a task's charge (and its refunds), so a key's spend is the sum of its
 * entries. The budget check sums the key's charges made since the period began, with their
 * refunds: `ledger_key_time` serves it (decision 1902).
 * Keys made before this migration are named after their prefix.
 * Frozen text, like every released migration: see 006.
 */
const STATEMENTS = [
  "alter table api_keys add column name text not null default ''",
  'alter table api_keys add column expires_at bigint',
  'alter table api_keys add column budget_micros bigint',
  'alter table api_keys add column budget_period text',
  "update api_keys set name = 'key ' || prefix",
  'alter table ledger_entries add column key_id text',
  'create index ledger_key_time on ledger_entries (key_id, created_at) where key_id is not null',
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const text of STATEMENTS) await sql.raw(text).execute(db);
}
