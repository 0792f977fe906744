import { BackendFailure } from '../backends/index.js';
import { finishTask } from './finish.js';
import { moveTask } from './transition.js';
import { applyTrims } from './trims.js';
import { failTask, jobOf, release, withTimeout, type EngineDeps, type TaskWork } from './work.js';

/**
 * One step of a claimed task: checks the 20-minute deadline, then hands the task to its backend
 * (waiting), asks for progress (queuing, generating) or collects the result. A BackendFailure
 * fails the task at once; any other error is retried with exponential backoff and fails the task
 * as 503 after ENGINE_MAX_ATTEMPTS in a row.
 */
export async function stepTask(deps: EngineDeps, task: TaskWork): Promise<void> {
  const { clock, settings } = deps;
  if (clock.now() >= Number(task.deadline_at)) {
    await failTask(deps, task, 'timeout', 'the task did not finish within 20 minutes; the price was refunded, please retry');
    return;
  }
  const backend = deps.backends.get(task.backend);
  if (!backend) {
    await failTask(deps, task, 'internal', `no generation backend named ${task.backend} is configured`);
    return;
  }
  const job = jobOf(task, deps.catalog);
  const call = <T>(p: Promise<T>, what: string) => withTimeout(p, settings.callTimeoutMs, `backend ${backend.name} ${what}`);
  try {
    if (task.state === 'waiting') {
      // The trim plan is applied to the real files before the backend sees the task (DECISIONS §11).
      const ready = await applyTrims(deps, task);
      const ref = await call(backend.submit(ready === task ? job : jobOf(ready, deps.catalog)), 'submit');
      if (typeof ref !== 'string' || ref.length === 0 || ref.length > 2000) throw new Error(`backend ${backend.name} submit returned no usable reference`);
      const now = clock.now();
      await deps.database.tx((trx) =>
        moveTask(trx, task.id, 'waiting', 'queuing', now, {
          backend_ref: ref, attempts: 0, last_error: null, locked_until: null, locked_by: null,
          run_at: Math.min(now + settings.pollMs, Number(task.deadline_at)),
        }, `handed to ${backend.name}`),
      );
      return;
    }
    const ref = task.backend_ref ?? '';
    const status = await call(backend.progress(job, ref), 'progress');
    switch (status.state) {
      case 'queued':
        await release(deps, task, recheck(status, settings.pollMs), { attempts: 0 });
        return;
      case 'running': {
        // Progress never goes back and reaches 100 only with success (DECISIONS §6).
        const progress = Math.max(Number(task.progress), Math.min(99, Math.floor(Number(status.progress) || 0)));
        if (task.state === 'queuing') {
          const now = clock.now();
          await deps.database.tx((trx) =>
            moveTask(trx, task.id, 'queuing', 'generating', now, {
              progress, attempts: 0, locked_until: null, locked_by: null, run_at: Math.min(now + recheck(status, settings.pollMs), Number(task.deadline_at)),
            }),
          );
        } else {
          await release(deps, task, recheck(status, settings.pollMs), { progress, attempts: 0 });
        }
        return;
      }
      case 'failed':
        await failTask(deps, task, status.kind, status.message);
        return;
      case 'done': {
        const out = await call(backend.results(job, ref), 'results');
        await finishTask(deps, task, job, out);
        return;
      }
      default:
        throw new Error(`backend ${backend.name} reported an unknown state ${JSON.stringify((status as { state?: unknown }).state)}`);
    }
  } catch (e) {
    if (e instanceof BackendFailure) {
      await failTask(deps, task, e.kind, e.message);
      return;
    }
    const attempts = Number(task.attempts) + 1;
    const message = e instanceof Error ? e.message : String(e);
    if (attempts >= settings.maxAttempts) {
      await failTask(deps, task, 'unavailable', `the generation backend failed ${attempts} times in a row (last: ${message}); the price was refunded, please retry`);
      return;
    }
    await release(deps, task, settings.retryMs * 2 ** (attempts - 1), { attempts, last_error: message.slice(0, 500) });
  }
}

/** When to look at a task again: the backend's hint (at least 10 ms), else the poll interval. */
function recheck(status: { recheckMs?: number }, pollMs: number): number {
  const hint = Number(status.recheckMs);
  return Number.isFinite(hint) && status.recheckMs !== undefined ? Math.max(10, Math.ceil(hint)) : pollMs;
}
