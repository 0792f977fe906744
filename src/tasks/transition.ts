import type { Kysely, Updateable } from 'kysely';
import type { DB, TasksTable } from '../store/index.js';
import { insertRow, updateThen, type Then } from '../store/index.js';
import { canMove, type TaskState } from './states.js';

/**
 * Moves a task from `from` to `to` inside the caller's transaction, compare-and-set: the update
 * only matches while the task is still in `from`, so of two workers racing, one wins and the
 * other gets false and must drop its work. With `lease`, the update also matches the claim token
 * in `locked_by` (the engine's fenced lease, decision 0014). Only when the task moved, appends the
 * task_events row and then makes the writes of `then` (the rows a finish brings, its callback), in
 * the same transaction: on PostgreSQL in the same statement (updateThen), one round trip.
 */
export async function moveTask(
  trx: Kysely<DB>,
  taskId: string,
  from: TaskState,
  to: TaskState,
  now: number,
  patch: Updateable<TasksTable> = {},
  detail = '',
  lease?: string,
  then: readonly Then<DB>[] = [],
): Promise<boolean> {
  if (!canMove(from, to)) throw new Error(`task ${taskId}: ${from} -> ${to} is not a transition`);
  const moved = await updateThen(
    trx,
    'tasks',
    { ...patch, state: to, updated_at: now },
    { id: taskId, state: from, ...(lease === undefined ? {} : { locked_by: lease }) },
    [{ insert: 'task_events', rows: [{ task_id: taskId, from_state: from, to_state: to, detail, at: now }] }, ...then],
  );
  return moved === 1;
}

/** Records the creation of a task (no previous state). */
export async function recordCreated(trx: Kysely<DB>, taskId: string, now: number): Promise<void> {
  await insertRow(trx, 'task_events', { task_id: taskId, from_state: null, to_state: 'waiting', detail: 'created', at: now });
}
