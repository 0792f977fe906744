import { sql, type Kysely } from 'kysely';

/**
 * Usage and the money report (decision 1906).
 * - `ledger_account_time`: one account's entries of a period (usage by day, model and key) are a
 *   range of this index instead of the account's whole history (`ledger_account` orders by id).
 * - `ledger_time`: every account's entries of a period (the operator's money report).
 * - `ledger_entries.source`: where money came from or went that the kind alone does not say:
 *   `card` on the credit of a card top-up, `stripe_refund` / `stripe_dispute` on the debit of a
 *   Stripe refund or dispute; null on everything else (operator top-ups and adjustments, charges,
 *   refunds). Entries written before are marked from the reasons the payments code wrote.
 * - `ledger_entries.model`: the model of a task's charge and of its refunds (like `key_id`), so
 *   usage per model reads the ledger alone; measured against a join with `tasks` (decision 1906).
 *   Entries written before take their task's model.
 * Frozen text, like every released migration: see 006.
 */
const STATEMENTS = [
  'create index ledger_account_time on ledger_entries (account_id, created_at)',
  'create index ledger_time on ledger_entries (created_at)',
  'alter table ledger_entries add column source text',
  "update ledger_entries set source = 'card' where kind = 'topup' and reason like 'card top-up %(Stripe Checkout %'",
  "update ledger_entries set source = 'stripe_refund' where kind = 'adjustment' and reason like 'Stripe refund of card top-up %'",
  "update ledger_entries set source = 'stripe_dispute' where kind = 'adjustment' and reason like 'Stripe dispute of card top-up %'",
  'alter table ledger_entries add column model text',
  'update ledger_entries set model = (select t.model from tasks t where t.id = ledger_entries.task_id) where task_id is not null',
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const text of STATEMENTS) await sql.raw(text).execute(db);
}
