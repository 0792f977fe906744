import { sql, type Kysely } from 'kysely';

/**
 * Low-balance alerts and account webhooks (decision 1905).
 * - `accounts`: the alert level (micro-USD, null: no alert), where it goes (`alert_url`, `alert_email`)
 *   and `alert_armed` (1 while the balance is at or above the level: the next crossing fires and
 *   clears it; a rise to the level sets it again), moved in the transaction of the ledger change.
 *   The previous webhook secret (sealed) and until when it still signs, after a rotation.
 * - `account_events`: the durable outbox of account events (the `balance.low` webhook and email),
 *   claimed with a lease by the delivery worker like `callbacks`.
 * - `webhook_attempts`: every delivery attempt of a task callback, a redelivery, an account event or
 *   a test delivery: when, the answer, the error, how long it took.
 * Frozen text, like every released migration: see 006.
 */
const STATEMENTS = [
  'alter table accounts add column alert_level_micros bigint',
  'alter table accounts add column alert_url text',
  'alter table accounts add column alert_email integer not null default 0',
  'alter table accounts add column alert_armed integer not null default 0',
  'alter table accounts add column webhook_secret_previous text',
  'alter table accounts add column webhook_secret_previous_until bigint',
  `create table account_events (
    id text primary key,
    account_id text not null references accounts (id),
    type text not null,
    channel text not null,
    url text,
    body text not null,
    status text not null,
    attempts integer not null default 0,
    due_at bigint not null,
    locked_until bigint,
    locked_by text,
    last_attempt_at bigint,
    last_status_code integer,
    last_error text,
    delivered_at bigint,
    created_at bigint not null
  )`,
  'create index account_events_due on account_events (status, due_at)',
  'create index account_events_account on account_events (account_id, created_at)',
  `create table webhook_attempts (
    id text primary key,
    account_id text not null,
    task_id text,
    event_id text,
    kind text not null,
    url text not null,
    webhook_id text not null,
    at bigint not null,
    ok integer not null,
    status_code integer,
    error text,
    duration_ms integer not null
  )`,
  'create index webhook_attempts_task on webhook_attempts (task_id, at)',
  'create index webhook_attempts_account on webhook_attempts (account_id, at)',
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const text of STATEMENTS) await sql.raw(text).execute(db);
}
