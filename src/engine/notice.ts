import type { Clock } from '../clock.js';
import type { Database } from '../store/index.js';
import { ACTIVE_STATES, type TaskSignals } from '../tasks/index.js';

/**
 * An upstream's completion notice for the task whose `upstream_token` is `token` (issue 8): an
 * active task becomes due now and the engines are told (`due`, carried to other processes by the
 * wake-ups). Nothing else changes: the engine's usual step asks the upstream, so a forged or
 * repeated notice is harmless. Also while a step holds the task: its release keeps a `run_at` that
 * changed meanwhile (keepNotice in lease.ts). False when no task has this token.
 */
export async function upstreamNotice(deps: { database: Database; clock: Clock; signals: TaskSignals }, token: string): Promise<boolean> {
  const { db } = deps.database;
  const task = await db.selectFrom('tasks').select(['id', 'state']).where('upstream_token', '=', token).executeTakeFirst();
  if (!task) return false;
  if (ACTIVE_STATES.includes(task.state)) {
    const now = deps.clock.now();
    await deps.database.tx((w) => w.updateTable('tasks').set({ run_at: now }).where('id', '=', task.id).where('state', 'in', ACTIVE_STATES).execute(), {
      atomic: false,
    });
    deps.signals.emit('due', task.id);
  }
  return true;
}
