import type { Clock } from '../clock.js';
import type { Kysely } from 'kysely';
import { prepared, type Database, type DB } from '../store/index.js';
import { ACTIVE_STATES, type TaskSignals } from '../tasks/index.js';

/** What making a task due needs. */
export interface NoticeDeps {
  database: Database;
  clock: Clock;
  signals: TaskSignals;
}

/**
 * An upstream's completion notice for the task whose `upstream_token` is `token` (issue 8): an
 * active task becomes due now and the engines are told (taskDue). Nothing else changes: the
 * engine's usual step asks the upstream, so a forged or repeated notice is harmless. False when no
 * task has this token. One statement when the task is active (the usual notice); a second, a read,
 * only when it is not, to tell a finished task (true) from an unknown token (false).
 */
export async function upstreamNotice(deps: NoticeDeps, token: string): Promise<boolean> {
  const now = deps.clock.now();
  const made = await deps.database.tx((w) => dueByToken(w, now, token), { atomic: false });
  for (const { id } of made.rows) deps.signals.emit('due', id);
  if (made.rows.length > 0) return true;
  const known = await deps.database.db.selectFrom('tasks').select('id').where('upstream_token', '=', token).executeTakeFirst();
  return known !== undefined;
}

const dueByToken = prepared(2, (db: Kysely<DB>, now: string, token: string) =>
  db
    .updateTable('tasks')
    .set({ run_at: now as unknown as number })
    .where('upstream_token', '=', token)
    .where('state', 'in', ACTIVE_STATES)
    .returning('id'),
);

/**
 * Makes an active task due now and tells the engines (`due`, carried to other processes by the
 * wake-ups): the worker holding it polls it at once, any other claims it. Used for an upstream's
 * notice and by a backend that hears of a job's end on its own (a ComfyUI websocket, decision 2101).
 * Also while a step holds the task: its release keeps a `run_at` that changed meanwhile (keepNotice
 * in lease.ts). A task that is no longer active is left alone.
 */
export async function taskDue(deps: NoticeDeps, taskId: string): Promise<void> {
  const now = deps.clock.now();
  const res = await deps.database.tx(
    (w) => w.updateTable('tasks').set({ run_at: now }).where('id', '=', taskId).where('state', 'in', ACTIVE_STATES).executeTakeFirst(),
    { atomic: false },
  );
  if (Number(res.numUpdatedRows) > 0) deps.signals.emit('due', taskId);
}
