import { sql, type Kysely, type RawBuilder, type Updateable } from 'kysely';
import { dialectOf, prepared, updateWhere } from '../store/index.js';
import type { DB, TasksTable, Then } from '../store/index.js';
import { moveTask, type TaskState } from '../tasks/index.js';
import type { EngineDeps, TaskWork } from './deps.js';

/**
 * Fenced leases (decision 0014). Every claim writes its own token to `locked_by`; every write of a
 * step that holds the task matches that token and reports whether it did. A worker whose lease ran
 * out and was claimed by another (a blocked event loop, a frozen process, database errors) can no
 * longer change the task: its writes match nothing, and it drops its work.
 */

/**
 * Now, in epoch milliseconds, by the clock that judges leases: PostgreSQL's own, one clock for
 * every worker whatever their machines' clocks say; on SQLite (one machine) the process's `now`.
 */
export function leaseNow(executor: Kysely<DB>, now: unknown): RawBuilder<number> {
  if (dialectOf(executor) === 'postgres') return sql<number>`CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS bigint)`;
  return sql<number>`CAST(${now} AS bigint)`;
}

/** When a lease taken or renewed now runs out (see leaseNow). */
export function leaseUntil(executor: Kysely<DB>, now: unknown, leaseMs: unknown): RawBuilder<number> {
  return sql<number>`${leaseNow(executor, now)} + CAST(${leaseMs} AS bigint)`;
}

const renewStatement = prepared(4, (db: Kysely<DB>, id: string, lease: string, leaseMs: string, now: string) =>
  db
    .updateTable('tasks')
    .set({ locked_until: leaseUntil(db, now, leaseMs) as unknown as number, updated_at: now as unknown as number })
    .where('id', '=', id)
    .where('locked_by', '=', lease),
);

/** Extends the lease of a task by ENGINE_LEASE_MS; false when the claim no longer holds it. */
export async function renewLease(deps: EngineDeps, task: TaskWork): Promise<boolean> {
  const res = await deps.database.tx((w) => renewStatement(w, task.id, task.lease, deps.settings.leaseMs, deps.clock.now()), { atomic: false });
  return Number(res.numAffectedRows ?? 0) === 1;
}

/** Who holds a task now (`locked_by`): null when nobody does. */
export async function holderOf(deps: EngineDeps, taskId: string): Promise<string | null> {
  const row = await deps.database.db.selectFrom('tasks').select('locked_by').where('id', '=', taskId).executeTakeFirst();
  return row?.locked_by ?? null;
}

/** Updates a task while this claim holds it (not a state change: the hand-off record); false when it does not. */
export async function updateHeld(deps: EngineDeps, task: TaskWork, patch: Updateable<TasksTable>): Promise<boolean> {
  const n = await deps.database.tx((w) => updateWhere(w, 'tasks', { ...patch, updated_at: deps.clock.now() }, { id: task.id, locked_by: task.lease }), {
    atomic: false,
  });
  return n === 1;
}

/**
 * `run_at = runAt` unless an upstream notice moved run_at during the step (upstreamNotice in
 * notice.ts sets it to the arrival time): then it is kept, so the task is looked at again at once.
 * Typed as a number for update patches; it is an SQL expression.
 */
export function keepNotice(task: TaskWork, runAt: number): number {
  return sql<number>`CASE WHEN run_at = ${Number(task.run_at)} THEN CAST(${runAt} AS bigint) ELSE run_at END` as unknown as number;
}

/** Gives the lease back and schedules the next look at the task, never later than its deadline; false when this claim no longer held it. */
export async function release(deps: EngineDeps, task: TaskWork, afterMs: number, patch: Updateable<TasksTable> = {}): Promise<boolean> {
  const runAt = Math.min(deps.clock.now() + afterMs, Number(task.deadline_at));
  const next = keepNotice(task, runAt);
  const res = await deps.database.tx(
    (w) =>
      w
        .updateTable('tasks')
        .set({ ...patch, locked_until: null, locked_by: null, updated_at: deps.clock.now() })
        .set({ run_at: next })
        .where('id', '=', task.id)
        .where('locked_by', '=', task.lease)
        .executeTakeFirst(),
    { atomic: false },
  );
  return Number(res.numUpdatedRows) === 1;
}

/**
 * Moves a held task from the state it was claimed in to `to` inside the caller's transaction,
 * compare-and-set on the state and the claim's token, and gives the lease back; only when it moved,
 * the writes of `then` follow in the same statement on PostgreSQL (moveTask). False when the task
 * moved on or another claim holds it.
 */
export function moveHeld(
  trx: Kysely<DB>,
  task: TaskWork,
  to: TaskState,
  now: number,
  patch: Updateable<TasksTable>,
  detail?: string,
  then: readonly Then<DB>[] = [],
): Promise<boolean> {
  return moveTask(trx, task.id, task.state, to, now, { ...patch, locked_until: null, locked_by: null }, detail, task.lease, then);
}
