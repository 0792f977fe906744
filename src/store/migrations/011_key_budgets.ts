import { sql, type Kysely } from 'kysely';

/**
 * Keys get a name, an optional expiry and an optional spend limit (DECISIONS §22); ledger entries
 * record the key that made a task's charge (and its refunds), so a key's spend is the sum of its
 * entries. `key_spend` keeps that sum per key for the running total, each UTC day and each UTC
 * month, moved in the transaction of every charge and refund (the refund in the periods of its
 * charge), so the budget check reads one row instead of summing the period (decision 1902).
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
  'create table key_spend (key_id text not null, period text not null, starts_at bigint not null, spent_micros bigint not null, primary key (key_id, period, starts_at))',
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const text of STATEMENTS) await sql.raw(text).execute(db);
}
