import { rm } from 'node:fs/promises';
import { BackendFailure, type BackendOutput } from '../backends/index.js';
import { finishTask } from './finish.js';
import { routesOf } from './routing.js';
import { submitTask } from './submit.js';
import { jobOf, pollDelay, withTimeout, type EngineDeps, type TaskWork } from './deps.js';
import { failTask } from './fail.js';
import { keepNotice, moveHeld, release } from './lease.js';
import { moveTask } from '../tasks/index.js';
import { updateWhere } from '../store/index.js';
import { tracing } from '../tracing/index.js';

/** Longest wait between two polls after transient errors of an upstream. */
const MAX_POLL_RETRY_MS = 60_000;

/**
 * One step of a claimed task: checks the 20-minute deadline (failing the task cancels the
 * upstream job), then hands the task to a route (waiting; see submit.ts), asks for progress
 * (queuing, generating) or collects the result. A BackendFailure fails the task at once. Any other
 * error is retried with exponential backoff: on the local backend the task fails as 503 after
 * ENGINE_MAX_ATTEMPTS in a row; an upstream that already took the task is asked again until the
 * deadline, since giving up early would refund a task the upstream may still finish and bill.
 * An upstream callback only moves `run_at` to now, so both paths end in this same step.
 * `attempts` was counted by the claim; a task claimed more than ENGINE_MAX_ATTEMPTS times in a row
 * without an outcome (its workers died or lost it each time) fails, unless an upstream has it.
 */
export async function stepTask(deps: EngineDeps, task: TaskWork): Promise<void> {
  const { clock, settings } = deps;
  if (clock.now() >= Number(task.deadline_at)) {
    await failTask(deps, task, 'timeout', 'the task did not finish within 20 minutes; the price was refunded, please retry');
    return;
  }
  const attempts = Number(task.attempts);
  if (attempts > settings.maxAttempts && (task.state === 'waiting' || task.backend === 'local')) {
    await failTask(
      deps,
      task,
      'unavailable',
      `the workers that took the task stopped ${attempts - 1} times before it got anywhere; the price was refunded, please retry`,
    );
    return;
  }
  if (task.state === 'waiting') {
    await submitTask(deps, task);
    return;
  }
  const backend = deps.backends.get(task.backend);
  if (!backend) {
    await failTask(deps, task, 'internal', `no generation backend named ${task.backend} is configured`);
    return;
  }
  const ref = routesOf(deps.catalog, task.model, task.backend).find((r) => r.name === task.backend);
  const kind = ref?.route.backend ?? (task.backend === 'local' ? 'local' : 'upstream');
  const breaker = ref ? deps.health.breaker(ref) : null;
  const job = jobOf(task, deps.catalog);
  const timed =
    <T>(p: () => Promise<T>, what: string) =>
    () =>
      withTimeout(p(), settings.callTimeoutMs, `backend ${backend.name} ${what}`);
  // A span for each call to an upstream (decision 2603); the local backend's calls are part of the step's own span.
  const call = <T>(p: () => Promise<T>, what: string) =>
    kind === 'local' ? timed(p, what)() : tracing.span(`upstream.${what}`, { 'gengate.route': backend.name }, timed(p, what));
  const next = pollDelay(deps, kind, clock.now() - Number(task.handed_at ?? clock.now()), backend);
  try {
    const backendRef = task.backend_ref ?? '';
    const status = await call(() => backend.progress(job, backendRef), 'progress');
    breaker?.success();
    switch (status.state) {
      case 'queued':
        // Nothing new: no write while this worker can keep the task (decision 2102).
        if (task.state === 'queuing' && kind !== 'local' && (await keep(deps, task, recheck(status, next)))) return;
        await release(deps, task, recheck(status, next), { attempts: 0 });
        return;
      case 'running': {
        // Progress never goes back and reaches 100 only with success (DECISIONS §6).
        const progress = Math.max(Number(task.progress), Math.min(99, Math.floor(Number(status.progress) || 0)));
        if (task.state === 'generating' && kind !== 'local' && progress === Number(task.progress) && (await keep(deps, task, recheck(status, next)))) return;
        // A change while this worker holds the task (or can): written, and the task stays held (decision 2102).
        if (kind !== 'local' && (await writeHeld(deps, task, progress, recheck(status, next)))) return;
        if (task.state === 'queuing') {
          const now = clock.now();
          await deps.database.tx((trx) =>
            moveHeld(trx, task, 'generating', now, {
              progress,
              attempts: 0,
              run_at: keepNotice(task, Math.min(now + recheck(status, next), Number(task.deadline_at))),
            }),
          );
        } else {
          await release(deps, task, recheck(status, next), { progress, attempts: 0 });
        }
        return;
      }
      case 'failed':
        await failTask(deps, task, status.kind, status.message);
        return;
      case 'done': {
        const out = await call(() => backend.results(job, backendRef), 'results');
        try {
          await finishTask(deps, task, job, out);
        } finally {
          // Upstream results were downloaded for this task only; the blob store has its copy now.
          if (kind !== 'local') await removeOutput(out);
        }
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
    const message = e instanceof Error ? e.message : String(e);
    // The detail (a renderer's cause with its paths and ffmpeg's words) is for the operator only.
    deps.log.warn({ taskId: task.id, route: backend.name, attempts, err: e }, 'engine: backend call failed');
    if (kind === 'local' && attempts >= settings.maxAttempts) {
      await failTask(
        deps,
        task,
        'unavailable',
        `the generation backend failed ${attempts} times in a row (last: ${message}); the price was refunded, please retry`,
      );
      return;
    }
    // Issue 36, decision 2501: the errors of one burst (failed polls of this task in a row) count once towards the route's breaker,
    // and a poll error is retried on the engine's backoff, ENGINE_RETRY_MS·2ⁿ, whatever the route's usual (or fallback) poll interval.
    // A held task's first failure reads attempts 0, a claimed one's 1; the release writes at least 1, so the next claim reads 2 or more.
    const burst = Math.max(1, attempts);
    if (kind !== 'local' && attempts <= 1) breaker?.failure();
    // An upstream is not asked more often than ENGINE_POLL_MS even with ENGINE_RETRY_MS 0.
    const backoff = settings.retryMs * 2 ** (burst - 1);
    const wait = kind === 'local' ? backoff : Math.min(MAX_POLL_RETRY_MS, Math.max(settings.pollMs, backoff));
    await release(deps, task, wait, { attempts: burst, last_error: message.slice(0, 500) });
  }
}

/** Whether the engine keeps the unchanged upstream task in memory (watch.ts; the local backend's renders are short and stay as they were). */
function keep(deps: EngineDeps, task: TaskWork, afterMs: number): Promise<boolean> {
  return deps.watch ? deps.watch.keep(task, afterMs) : Promise.resolve(false);
}

/**
 * Writes a running upstream task's news (queuing → generating, or more progress) without giving up
 * the task: it stays under the watch lease and is polled from memory. False when the engine cannot
 * hold it (nothing written: the caller releases it as before) or the write did not match.
 */
async function writeHeld(deps: EngineDeps, task: TaskWork, progress: number, afterMs: number): Promise<boolean> {
  const watch = deps.watch;
  if (!watch || !(watch.holds(task) || watch.room())) return false;
  const now = deps.clock.now();
  let until = 0;
  const moved = await deps.database.tx(async (trx) => {
    const { until: u, ...lease } = watch.leasePatch(trx, task, now);
    until = u;
    const patch = { ...lease, progress, attempts: 0 };
    if (task.state === 'queuing') return moveTask(trx, task.id, 'queuing', 'generating', now, patch, '', task.lease);
    return (await updateWhere(trx, 'tasks', { ...patch, updated_at: now }, { id: task.id, locked_by: task.lease })) === 1;
  });
  if (!moved) return true;
  Object.assign(task, { state: 'generating', progress, attempts: 0, run_at: until });
  watch.adopt(task, afterMs);
  return true;
}

async function removeOutput(out: BackendOutput): Promise<void> {
  const paths = [...(Array.isArray(out?.files) ? out.files : []), ...(out?.lastFrame ? [out.lastFrame] : [])].map((f) => f.path);
  await Promise.all(paths.map((p) => rm(p, { force: true }).catch(() => {})));
}

/** When to look at a task again: the backend's hint (at least 10 ms), else the route's poll interval. */
function recheck(status: { recheckMs?: number }, pollMs: number): number {
  const hint = Number(status.recheckMs);
  return Number.isFinite(hint) && status.recheckMs !== undefined ? Math.max(10, Math.ceil(hint)) : pollMs;
}
