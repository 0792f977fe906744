import { BackendFailure, type Backend, type BackendJob } from '../backends/index.js';
import { NotAccepted } from '../backends/index.js';
import { randomId } from '../ids.js';
import { ACTIVE_STATES, moveTask } from '../tasks/index.js';
import { routesOf, type RouteRef } from './routing.js';
import { applyTrims } from './trims.js';
import { jobOf, pollDelay, withTimeout, type EngineDeps, type TaskWork } from './deps.js';
import { failTask } from './fail.js';
import { tracing } from '../tracing/index.js';
import { keepNotice, moveHeld, release, updateHeld } from './lease.js';

/** Path of the upstream callback URL; the token after it is the task's `upstream_token`. */
export const NOTIFY_PATH = '/upstream/v1/notify/';
/** Longest wait between two submit retries, whatever the backoff or the upstream's Retry-After says. */
const MAX_RETRY_MS = 120_000;

/**
 * Hands a waiting task to the first route of its model that can take it (DECISIONS §16, issue 8):
 * routes before the task's `route_index` were given up already; a route whose breaker is open or
 * whose concurrency is used up is skipped. A submit that was surely not taken (NotAccepted, or any
 * error of a backend that may be submitted twice) is retried with backoff, ENGINE_MAX_ATTEMPTS times
 * per route, then the next route is tried. An error that leaves open whether the upstream took the
 * job fails the task (refunded) rather than risk paying twice for one task.
 */
export async function submitTask(deps: EngineDeps, task: TaskWork): Promise<void> {
  const routes = routesOf(deps.catalog, task.model, task.backend);
  const start = Math.min(Number(task.route_index), routes.length - 1);
  if (task.handed_at !== null && task.backend_ref === null) {
    // A submit started earlier and its outcome was never recorded (the process died during it).
    const earlier = routes.find((r) => r.name === task.backend);
    if (earlier && !safeToResubmit(earlier, deps.backends.get(earlier.name))) {
      await failTask(
        deps,
        task,
        'unavailable',
        `the hand-off to ${earlier.name} was interrupted and that upstream cannot be asked twice safely; the price was refunded, please retry`,
      );
      return;
    }
  }
  const skipped: string[] = [];
  let full = false;
  for (const ref of routes.slice(start)) {
    const backend = deps.backends.get(ref.name);
    if (!backend) {
      skipped.push(`${ref.name} (not configured)`);
      continue;
    }
    if (!(await deps.health.reserve(deps.database, ref))) {
      full = true;
      skipped.push(`${ref.name} (at its concurrency limit)`);
      continue;
    }
    // An upstream account below its route's minimum (kie.ai credit, DECISIONS §19) is skipped like an open breaker.
    const low = await deps.health.accountSkip(ref, backend, (reason) =>
      deps.log.warn({ route: ref.name, reason }, 'engine: route skipped: upstream account low'),
    );
    if (low) {
      deps.health.done(ref);
      skipped.push(`${ref.name} (${low})`);
      continue;
    }
    const breaker = deps.health.breaker(ref);
    if (breaker && !breaker.allow()) {
      deps.health.done(ref);
      skipped.push(`${ref.name} (circuit open)`);
      continue;
    }
    try {
      await submitTo(deps, task, ref, backend);
    } finally {
      deps.health.done(ref);
    }
    return;
  }
  if (full) {
    // A route is only busy: wait for a slot (the 20-minute deadline still applies); this claim does not count as an attempt.
    await release(deps, task, deps.settings.pollMs, { attempts: Number(task.attempts) - 1 });
    return;
  }
  const name = deps.catalog.find(task.model)?.id ?? task.model;
  await failTask(deps, task, 'unavailable', `no route of ${name} can take the task now (${skipped.join(', ')}); the price was refunded, please retry later`);
}

/** Whether calling submit again for the same task is harmless on this route. */
function safeToResubmit(ref: RouteRef, backend: Backend | undefined): boolean {
  return ref.route.backend === 'local' || backend?.idempotentSubmit === true;
}

async function submitTo(deps: EngineDeps, task: TaskWork, ref: RouteRef, backend: Backend): Promise<void> {
  const { clock } = deps;
  // The trim plan is applied to the real files before the backend sees the task (DECISIONS §11).
  let ready: TaskWork;
  try {
    ready = await applyTrims(deps, task);
  } catch (e) {
    // Nothing was sent yet: retried like a submit that was not accepted, without blaming the route.
    await submitFailed(deps, task, ref, backend, new NotAccepted(e instanceof Error ? e.message : String(e)), false);
    return;
  }
  let job = jobOf(ready, deps.catalog);
  const upstream = ref.route.backend !== 'local';
  // A job whose upstream insists on a callback address gets one with UPSTREAM_WEBHOOKS off too (decision 2500); it is still polled as usual.
  const base = deps.webhookBase ?? (backend.needsCallback?.(job) ? (deps.publicBase ?? null) : null);
  const token = upstream && base ? (task.upstream_token ?? randomId('', 24)) : null;
  if (token) job = { ...job, webhookUrl: `${base}${NOTIFY_PATH}${token}` };
  // Recorded before the call: a crash during it must not lead to a second submit to an upstream that bills twice.
  // Not recorded means another worker took the task over (this lease ran out): it is theirs to submit.
  if (!(await updateHeld(deps, ready, { backend: ref.name, route_index: ref.index, handed_at: clock.now(), ...(token ? { upstream_token: token } : {}) }))) {
    deps.log.warn({ taskId: task.id, route: ref.name }, 'engine: the lease ran out before the hand-off; not submitted');
    return;
  }
  // A notice may come before the hand-off is written: the watch remembers it (watch.ts `expect`).
  const watch = token ? deps.watch : undefined;
  watch?.expect(task.id);
  try {
    await handOff(deps, task, ready, ref, backend, job);
  } finally {
    watch?.forget(task.id);
  }
}

/** Submits the job to the route and records the hand-off (the task is queuing, held by this worker when it can). */
async function handOff(deps: EngineDeps, task: TaskWork, ready: TaskWork, ref: RouteRef, backend: Backend, job: BackendJob): Promise<void> {
  const { clock, settings } = deps;
  const breaker = deps.health.breaker(ref);
  const upstream = ref.route.backend !== 'local';
  let ref_: string;
  try {
    const submit = () => withTimeout(backend.submit(job), settings.callTimeoutMs, `backend ${ref.name} submit`);
    // A span for a call to an upstream (decision 2603); a hand-off to the local backend is part of the step's.
    ref_ = await (upstream ? tracing.span('upstream.submit', { 'gengate.route': ref.name }, submit) : submit());
    if (typeof ref_ !== 'string' || ref_.length === 0 || ref_.length > 2000) throw new Error(`backend ${ref.name} submit returned no usable reference`);
  } catch (e) {
    await submitFailed(deps, task, ref, backend, e);
    return;
  }
  breaker?.success();
  deps.countSubmit(ref.name, 'accepted');
  const now = clock.now();
  const handed = { backend: ref.name, route_index: ref.index, backend_ref: ref_, handed_at: now, attempts: 0, last_error: null };
  const firstPoll = pollDelay(deps, ref.route.backend, 0, backend, 0);
  // An upstream job is followed from memory when the engine can hold one more task: the task stays this claim's, under the watch lease (decision 2102).
  const watch = upstream && deps.watch?.room() ? deps.watch : null;
  let until = 0;
  const moved = await deps.database.tx((trx) => {
    if (watch) {
      const { until: u, ...lease } = watch.leasePatch(trx, task, now);
      until = u;
      return moveTask(trx, task.id, task.state, 'queuing', now, { ...handed, ...lease }, `handed to ${ref.name}`, task.lease);
    }
    return moveHeld(
      trx,
      task,
      'queuing',
      now,
      { ...handed, run_at: keepNotice(task, Math.min(now + firstPoll, Number(task.deadline_at))) },
      `handed to ${ref.name}`,
    );
  });
  if (moved && watch) {
    // The row as it now is (with the trimmed inputs, which the result's checks and pricing read).
    const held = Object.assign(ready, { ...handed, state: 'queuing' as const, run_at: until });
    watch.adopt(held, firstPoll);
  }
  // The local backend keeps no job between steps: nothing is left behind.
  if (!moved && upstream) await dropOrphan(deps, task, ref, backend, job, ref_);
}

/**
 * The upstream took the job but the task was no longer this claim's to record it (the lease ran
 * out and another worker failed, finished or re-submitted the task meanwhile, or the client cancelled it). Unless the task now
 * stands on this very job (an idempotent route hands the same job to a re-submit), nobody would
 * ever follow or pay for it: it is cancelled where the route's API allows, and logged.
 */
async function dropOrphan(deps: EngineDeps, task: TaskWork, ref: RouteRef, backend: Backend, job: BackendJob, upstreamRef: string): Promise<void> {
  const now = await deps.database.db.selectFrom('tasks').select(['state', 'backend', 'backend_ref']).where('id', '=', task.id).executeTakeFirst();
  const same = now?.backend === ref.name && (now.backend_ref === upstreamRef || (safeToResubmit(ref, backend) && ACTIVE_STATES.includes(now.state)));
  const where = { taskId: task.id, route: ref.name, upstreamRef, state: now?.state };
  if (same) {
    deps.log.warn(where, 'engine: the lease ran out during an accepted submit; the task follows the same upstream job');
    return;
  }
  const outcome = await withTimeout(backend.cancel(job, upstreamRef), deps.settings.callTimeoutMs, `backend ${ref.name} cancel`).catch(
    (e: unknown) => (deps.log.error({ ...where, err: e }, 'engine: cancelling an orphaned upstream job failed'), null),
  );
  if (outcome === 'cancelled') deps.log.warn(where, 'engine: the lease ran out during an accepted submit; the upstream job was cancelled');
  else if (outcome) deps.log.error({ ...where, outcome }, 'engine: an orphaned upstream job could not be cancelled; it may run and be billed');
}

async function submitFailed(deps: EngineDeps, task: TaskWork, ref: RouteRef, backend: Backend, e: unknown, blameRoute = true): Promise<void> {
  const { settings } = deps;
  const breaker = blameRoute ? deps.health.breaker(ref) : null;
  const message = e instanceof Error ? e.message : String(e);
  if (e instanceof BackendFailure) {
    // The upstream answered and refused this task: the route works, the task is at fault.
    breaker?.success();
    deps.countSubmit(ref.name, 'refused');
    await failTask(deps, task, e.kind, e.message);
    return;
  }
  breaker?.failure();
  const unclear = !(e instanceof NotAccepted) && !safeToResubmit(ref, backend);
  if (blameRoute) deps.countSubmit(ref.name, unclear ? 'unclear' : 'not_accepted');
  if (unclear) {
    await failTask(
      deps,
      task,
      'unavailable',
      `the hand-off to ${ref.name} failed without a clear answer (${message}); it is not repeated because the upstream might have taken it. The price was refunded, please retry`,
    );
    return;
  }
  const attempts = Number(task.attempts);
  const routes = routesOf(deps.catalog, task.model, task.backend);
  const last = `${ref.name}: ${message}`.slice(0, 500);
  if (attempts < settings.maxAttempts) {
    const backoff = settings.retryMs * 2 ** (attempts - 1);
    const wait = Math.min(MAX_RETRY_MS, Math.max(backoff, e instanceof NotAccepted ? (e.retryAfterMs ?? 0) : 0));
    await release(deps, task, wait, { attempts, last_error: last, handed_at: null, route_index: ref.index });
    return;
  }
  if (ref.index + 1 < routes.length) {
    await release(deps, task, 0, { attempts: 0, last_error: last, handed_at: null, route_index: ref.index + 1 });
    return;
  }
  await failTask(
    deps,
    task,
    'unavailable',
    `the generation backend failed ${attempts} times in a row (last: ${message}); the price was refunded, please retry`,
  );
}
