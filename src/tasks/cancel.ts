import type { Backend, CancelOutcome } from '../backends/index.js';
import type { Ledger } from '../billing/index.js';
import type { Catalog } from '../catalog/index.js';
import type { Clock } from '../clock.js';
import { Errors } from '../errors.js';
import type { Database } from '../store/index.js';
import { callbackDueThen, finishedSignals } from './finished.js';
import { jobOf } from './job.js';
import { failureCode, type TaskState } from './states.js';
import type { TaskSignals } from './tasks.js';
import { moveTask } from './transition.js';

/** What a cancel needs besides the task: the backend of a route by name (loaded on demand in an API process) and how long it may take. */
export interface CancelDeps {
  database: Database;
  ledger: Ledger;
  catalog: Catalog;
  clock: Clock;
  signals: TaskSignals;
  backendOf: (route: string) => Promise<Backend | undefined>;
  /** Deadline of the backend's cancel call (BACKEND_CALL_TIMEOUT_MS); past it the outcome is `unknown`. */
  callTimeoutMs: number;
}

/** The answer of a cancel that failed the task (`data` of POST /jobs/cancel). */
export interface Cancelled {
  taskId: string;
  state: 'fail';
  status: 'failed';
  failCode: number;
  refunded: true;
}

/** Rounds of read, ask, compare-and-set before giving up on a task that keeps moving under the cancel (each move is the engine's, forward only). */
const ROUNDS = 5;

const CANCEL = failureCode('cancelled');
/** What a refusal's message says the route did; `unreachable`: this process has no backend for the route (not configured, or its credential is not set here). */
const SAID: Record<Exclude<CancelOutcome, 'cancelled'> | 'unreachable', string> = {
  'not-cancellable': 'answered that it cannot cancel it now (a job that has started may have to finish there)',
  unknown: 'gave no clear answer to the cancel',
  unreachable: 'this server cannot reach (the route is not configured here, or its credential is not set in this process)',
};

/**
 * POST /jobs/cancel (DECISIONS §22, decision 1901). A task still `waiting` (not handed to a backend)
 * fails at once: compare-and-set to `fail` 499 with the full refund and the callback row in one
 * transaction. A handed task (`queuing`, `generating`) is first cancelled at its backend, outside
 * any transaction; only a confirmed cancel fails it, by the same compare-and-set from the state it
 * is still in. The compare-and-set also clears the engine's lease (`locked_by`), so a worker holding
 * the task (mid-submit, mid-poll, mid-download) loses every later write: a submit that was accepted
 * meanwhile is cancelled by that worker as an orphan, results are thrown away. A task the engine
 * finished first is 409; the refund happens once whatever the interleaving (one transition to `fail`,
 * and the ledger's unique refund per task).
 */
export async function cancelTask(deps: CancelDeps, accountId: string, taskId: string): Promise<Cancelled> {
  let confirmed: string | null = null;
  for (let round = 0; round < ROUNDS; round++) {
    const task = await deps.database.db
      .selectFrom('tasks')
      .select(['id', 'account_id', 'state', 'model', 'input', 'media', 'backend', 'backend_ref', 'callback_url', 'fail_code'])
      .where('id', '=', taskId)
      .executeTakeFirst();
    if (!task || task.account_id !== accountId) throw Errors.taskNotFound(taskId);
    if (task.state === 'success' || task.state === 'fail') {
      const how = task.state === 'fail' ? `failed (failCode ${Number(task.fail_code)})` : 'succeeded';
      throw Errors.notCancellable(`task ${taskId} is already final: it ${how}; only a task that is waiting, queuing or generating can be cancelled`);
    }
    if (task.state !== 'waiting') {
      const route = task.backend;
      const ref = task.backend_ref ?? '';
      const asked = `${route} ${ref}`;
      if (confirmed !== asked) {
        const outcome = await askBackend(deps, task, route, ref);
        if (outcome !== 'cancelled') {
          throw Errors.notCancellable(`task ${taskId} is ${task.state} on the route ${route}, which ${SAID[outcome]}; the task runs on and stays charged`);
        }
        confirmed = asked;
      }
    }
    if (await failCancelled(deps, task, task.state)) {
      return { taskId, state: 'fail', status: 'failed', failCode: CANCEL.code, refunded: true };
    }
  }
  throw Errors.notCancellable(`task ${taskId} kept changing state during the cancel; please try again`);
}

/** The backend's cancel of the task's job, bounded by the call deadline (past it, or on a throw: `unknown`); `unreachable` when this process has no backend for the route. */
async function askBackend(
  deps: CancelDeps,
  task: { id: string; model: string; input: string; media: string | null },
  route: string,
  ref: string,
): Promise<CancelOutcome | 'unreachable'> {
  const backend = await deps.backendOf(route).catch(() => undefined);
  if (!backend || !ref) return 'unreachable';
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<CancelOutcome>((resolve) => (timer = setTimeout(() => resolve('unknown'), deps.callTimeoutMs)));
  try {
    return await Promise.race([backend.cancel(jobOf(task, deps.catalog), ref).catch((): CancelOutcome => 'unknown'), late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Compare-and-set from `from` to `fail` 499, with the full refund and the due callback, clearing any engine lease; false when the task moved on. */
async function failCancelled(deps: CancelDeps, task: { id: string; callback_url: string | null }, from: TaskState): Promise<boolean> {
  const now = deps.clock.now();
  const message = 'the task was cancelled at the client’s request; the price was refunded';
  const moved = await deps.database.tx(async (trx) => {
    const ok = await moveTask(
      trx,
      task.id,
      from,
      'fail',
      now,
      { fail_code: CANCEL.code, fail_type: CANCEL.type, fail_msg: message, completed_at: now, refunded: 1, locked_by: null, locked_until: null },
      `${CANCEL.code} ${CANCEL.type}: cancelled by the client (from ${from})`,
      undefined,
      callbackDueThen(task, now),
    );
    if (!ok) return false;
    await deps.ledger.refund(trx, task.id, 'refund', `task ${task.id} cancelled by the client`);
    return true;
  });
  if (moved) finishedSignals(deps.signals, task);
  return moved;
}
