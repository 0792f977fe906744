import type { Kysely } from 'kysely';
import type { AccountEventsTable, CallbacksTable, DB, Dialect } from '../store/index.js';
import type { Attempt } from './deliver.js';

/** The outboxes delivered under a lease, each with the column that names its rows. */
const KEYS = { callbacks: 'task_id', account_events: 'id' } as const satisfies { callbacks: keyof CallbacksTable; account_events: keyof AccountEventsTable };

/** The columns a claim reads and writes, which every outbox has. */
type LeaseColumns = Pick<CallbacksTable, 'status' | 'due_at' | 'locked_until' | 'locked_by'>;

/** The rows of each outbox (extending the record checks that each has the lease columns). */
interface Rows extends Record<keyof typeof KEYS, LeaseColumns> {
  callbacks: CallbacksTable;
  account_events: AccountEventsTable;
}

/** How long past its delivery timeout a lease still holds: a worker's own bookkeeping after the call. */
const LEASE_SLACK_MS = 30_000;

/** Who claims, for how long a delivery may take, and when (the worker's clock). */
export interface Claimant {
  dialect: Dialect;
  workerId: string;
  timeoutMs: number;
  now: number;
}

/**
 * Takes leases on up to `n` due rows of an outbox in the caller's transaction and returns them as
 * they are now: pending, `due_at` come, and no live lease (none, or run out), oldest due first.
 * A lease lasts the delivery timeout and 30 s more and names the worker, so a crash mid-delivery is
 * retried once it runs out, and an outcome is written only while `locked_by` is still this worker.
 * On PostgreSQL the due rows are taken FOR UPDATE SKIP LOCKED, so the workers of several processes
 * claim different rows at once; SQLite has one writer.
 */
export async function claimDue<T extends keyof Rows>(trx: Kysely<DB>, outbox: T, n: number, by: Claimant): Promise<Array<Rows[T]>> {
  const key = KEYS[outbox];
  // One statement for either table: typed on the lease columns they share, the key named at run time.
  const db = trx as unknown as Kysely<Record<string, LeaseColumns>>;
  const table: string = outbox;
  const ref = db.dynamic.ref<string>(key);
  const { now } = by;
  let due = db
    .selectFrom(table)
    .select(ref)
    .where('status', '=', 'pending')
    .where('due_at', '<=', now)
    .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<=', now)]))
    .orderBy('due_at')
    .limit(n);
  if (by.dialect === 'postgres') due = due.forUpdate().skipLocked();
  const rows = await db
    .updateTable(table)
    .set({ locked_until: now + by.timeoutMs + LEASE_SLACK_MS, locked_by: by.workerId })
    .where(ref, 'in', due)
    .returningAll()
    .execute();
  return rows as unknown as Array<Rows[T]>;
}

/** What one attempt comes to: delivered, tried again after the next delay, or given up. */
export type Outcome = 'delivered' | 'retry' | 'failed';

/**
 * The outcome of one attempt on a claimed row, and the columns that record it and end the lease:
 * delivered on success; else, when `retries` and a delay is left (`retryDelaysMs[attempts - 1]`),
 * pending again and due after that delay; else failed. `due_at` is kept unless retried.
 */
export function settle<D extends number | null>(
  row: { attempts: number; due_at: D },
  attempt: Attempt,
  now: number,
  retryDelaysMs: readonly number[],
  retries: boolean,
) {
  const attempts = Number(row.attempts) + 1;
  const retryIn = retries ? retryDelaysMs[attempts - 1] : undefined;
  const outcome: Outcome = attempt.ok ? 'delivered' : retryIn === undefined ? 'failed' : 'retry';
  const patch = {
    status: outcome === 'retry' ? ('pending' as const) : outcome,
    attempts,
    last_attempt_at: now,
    last_status_code: attempt.statusCode,
    last_error: attempt.error,
    delivered_at: attempt.ok ? now : null,
    due_at: retryIn !== undefined && outcome === 'retry' ? now + retryIn : row.due_at,
    locked_until: null,
    locked_by: null,
  };
  return { outcome, attempts, patch };
}
