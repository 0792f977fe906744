import type { Kysely } from 'kysely';
import type { DB } from '../store/index.js';
import type { TaskSignals } from './tasks.js';

/** What the two helpers read of a task. */
interface Finishing {
  id: string;
  callback_url: string | null;
}

/** Marks the callback outbox row due, in the transaction that makes the task final; tasks without a callBackUrl have none, so nothing is written for them. */
export async function callbackDue(trx: Kysely<DB>, task: Finishing, now: number): Promise<void> {
  if (!task.callback_url) return;
  await trx.updateTable('callbacks').set({ due_at: now }).where('task_id', '=', task.id).where('due_at', 'is', null).execute();
}

/** After that transaction committed: tells waiters (MCP) the task is final and, when it has a callBackUrl, wakes callback delivery. */
export function finishedSignals(signals: TaskSignals, task: Finishing): void {
  signals.emit('finished', task.id);
  if (task.callback_url) signals.emit('callbackDue', task.id);
}
