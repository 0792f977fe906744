import { sql, type Kysely } from 'kysely';

/**
 * Key spend counters only where they are used (decision 1902, amended). `accounts.key_spend_kept`:
 * 1 when the charges and refunds of the account's keys move their `key_spend` counters. Accounts
 * with a budgeted key keep them; the others' counters go (they are the ledger's sums, and are
 * filled from the ledger again when an account starts keeping them). Frozen text, like every
 * released migration: see 006.
 */
const STATEMENTS = [
  'alter table accounts add column key_spend_kept integer not null default 0',
  'update accounts set key_spend_kept = 1 where exists (select 1 from api_keys k where k.account_id = accounts.id and k.budget_micros is not null)',
  'delete from key_spend where key_id not in (select k.id from api_keys k join accounts a on a.id = k.account_id where a.key_spend_kept = 1)',
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const text of STATEMENTS) await sql.raw(text).execute(db);
}
