import type { Kysely } from 'kysely';
import type { AccountEventsTable, CallbacksTable, DB, Dialect } from '../store/index.js';

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
