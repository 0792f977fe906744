import type { DB, Then } from '../store/index.js';
import type { TaskSignals } from './tasks.js';

/** What the two helpers read of a task. */
interface Finishing {
  id: string;
  callback_url: string | null;
}

/**
 * Marks the callback outbox row due, as a write that follows the move that makes the task final
 * (moveTask's `then`: in its transaction, on PostgreSQL in its statement); tasks without a
 * callBackUrl have no row, so nothing is written for them.
 */
export function callbackDueThen(task: Finishing, now: number): Then<DB>[] {
  if (!task.callback_url) return [];
  return [{ update: 'callbacks', set: { due_at: now }, where: { task_id: task.id, due_at: null } }];
}

/** After that transaction committed: tells waiters (MCP) the task is final and, when it has a callBackUrl, wakes callback delivery. */
export function finishedSignals(signals: TaskSignals, task: Finishing): void {
  signals.emit('finished', task.id);
  if (task.callback_url) signals.emit('callbackDue', task.id);
}
