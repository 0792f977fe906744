import { sql, type Kysely } from 'kysely';

/**
 * Stripe's fee of each card top-up (decision 1906, amended). `topups.fee_micros` and `net_micros`:
 * the fee and the net of the charge's balance transaction in micro-USD, null until known (fetched
 * after the credit commits, never in its transaction); `fee_note` says why it is not known yet
 * (not available yet, another currency, Stripe's error); `fee_attempts` and `fee_due_at` drive the
 * bounded retry: a paid top-up never tried (attempts 0, so also every one paid before this
 * migration) is due at once, a tried one at `fee_due_at`, and one tried with `fee_due_at` null is
 * done. `topups_fee_missing` holds only paid top-ups without a fee (the retry's scan);
 * `topups_paid` serves the money report's range of payment times. Frozen text, like every released
 * migration: see 006.
 */
const STATEMENTS = [
  'alter table topups add column fee_micros bigint',
  'alter table topups add column net_micros bigint',
  'alter table topups add column fee_note text',
  'alter table topups add column fee_attempts integer not null default 0',
  'alter table topups add column fee_due_at bigint',
  'create index topups_fee_missing on topups (paid_at) where fee_micros is null and paid_at is not null',
  'create index topups_paid on topups (paid_at)',
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const text of STATEMENTS) await sql.raw(text).execute(db);
}
