import { sql, type Kysely } from 'kysely';

/**
 * Card top-ups through Stripe Checkout (decision 1904).
 * - `topups`: one row per Checkout Session GenGate created, `pending` until the signed
 *   `checkout.session.completed` event credits it (`paid`). The session id is unique; the credit
 *   is the update from `pending` to `paid` in the same transaction as the ledger entry, so a
 *   session is credited once however often and wherever its event arrives.
 * - `topup_reversals`: Stripe refunds and disputes by payment intent; `topup_id` is null and
 *   `applied` 0 while the top-up is not credited yet (an event that came first), `unpaid_micros`
 *   is what the account's balance could not cover.
 * Frozen text, like every released migration: see 006.
 */
const STATEMENTS = [
  `create table topups (
    id text primary key,
    account_id text not null references accounts (id),
    amount_micros bigint not null,
    status text not null,
    session_id text,
    payment_intent text,
    paid_micros bigint not null default 0,
    created_at bigint not null,
    paid_at bigint
  )`,
  'create unique index topups_session on topups (session_id)',
  'create index topups_account on topups (account_id, created_at)',
  'create index topups_payment_intent on topups (payment_intent)',
  `create table topup_reversals (
    id text primary key,
    payment_intent text not null,
    topup_id text,
    kind text not null,
    amount_micros bigint not null,
    debited_micros bigint not null default 0,
    unpaid_micros bigint not null default 0,
    applied integer not null default 0,
    event_id text not null,
    created_at bigint not null,
    applied_at bigint
  )`,
  'create index topup_reversals_intent on topup_reversals (payment_intent)',
  'create index topup_reversals_topup on topup_reversals (topup_id)',
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const text of STATEMENTS) await sql.raw(text).execute(db);
}
