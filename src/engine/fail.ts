import type { FailKind } from '../backends/index.js';
import { callbackDueThen, failureCode, finishedSignals as announceFinished } from '../tasks/index.js';
import { jobOf, withTimeout, type EngineDeps, type TaskWork } from './deps.js';
import { moveHeld } from './lease.js';
import { shownMessage } from './shown.js';

/**
 * Fails a task exactly once: compare-and-set to `fail` with the failure fields, the full refund
 * and the callback outbox row in one transaction. False when another worker moved or holds it.
 * Every failure passes here, so this is where the client's message is cleaned (no server paths, no
 * tool output); the full message goes to the log and the task's event row.
 */
export async function failTask(deps: EngineDeps, task: TaskWork, kind: FailKind, message: string): Promise<boolean> {
  const { code, type } = failureCode(kind);
  const now = deps.clock.now();
  const shown = shownMessage(message);
  if (shown !== message) deps.log.warn({ taskId: task.id, failCode: code, detail: message }, 'engine: task failed; its message was cleaned for the client');
  const moved = await deps.database.tx(async (trx) => {
    const ok = await moveHeld(
      trx,
      task,
      'fail',
      now,
      { fail_code: code, fail_type: type, fail_msg: shown, completed_at: now, refunded: 1 },
      `${code} ${type}: ${message}`,
      callbackDueThen(task, now),
    );
    if (!ok) return false;
    await deps.ledger.refund(trx, task.id, 'refund', `task ${task.id} failed (${code})`);
    return true;
  });
  if (moved) {
    finishedSignals(deps, task);
    const backend = deps.backends.get(task.backend);
    // Best effort, bounded: a hanging cancel must not hold the step (the task is already failed and refunded).
    if (backend && task.backend_ref) {
      await withTimeout(backend.cancel(jobOf(task, deps.catalog), task.backend_ref), deps.settings.callTimeoutMs, `backend ${backend.name} cancel`).catch(
        () => {},
      );
    }
  }
  return moved;
}

/** Tells waiters a task is final and, when it has a callBackUrl, wakes callback delivery. */
export function finishedSignals(deps: EngineDeps, task: TaskWork): void {
  announceFinished(deps.signals, task);
}
