import { sql, type Kysely, type Selectable, type Updateable } from 'kysely';
import type { Backend, BackendJob, FailKind } from '../backends/index.js';
import type { Ledger } from '../billing/index.js';
import type { Catalog } from '../catalog/index.js';
import type { Clock } from '../clock.js';
import type { Files } from '../files/index.js';
import type { Database } from '../store/db.js';
import type { DB, TasksTable } from '../store/schema.js';
import { updateWhere } from '../store/prepared.js';
import { failureCode, type TaskState } from './states.js';
import { moveTask } from './transition.js';
import type { TaskSignals } from './tasks.js';
import type { RouteHealth } from './routing.js';

/** How a submit to a route ended: taken, surely not taken (retry or fail over), refused, or unclear (not repeated). */
export type SubmitOutcome = 'accepted' | 'not_accepted' | 'refused' | 'unclear';

/** A claimed task row. */
export type TaskWork = Selectable<TasksTable> & { seq: number };

/** Everything a step of the engine uses. */
export interface EngineDeps {
  database: Database;
  ledger: Ledger;
  catalog: Catalog;
  clock: Clock;
  files: Files;
  /** Backends by route name (routeName): the shared `local` one and one per upstream route. */
  backends: ReadonlyMap<string, Backend>;
  /** Breakers and concurrency slots of the routes. */
  health: RouteHealth;
  /** PUBLIC_BASE_URL when UPSTREAM_WEBHOOKS says upstreams can reach it; null: polling only. */
  webhookBase: string | null;
  signals: TaskSignals;
  /** Told the outcome of every submit to a route (metrics). */
  countSubmit?: (route: string, outcome: SubmitOutcome) => void;
  settings: {
    pollMs: number;
    leaseMs: number;
    maxAttempts: number;
    retryMs: number;
    callTimeoutMs: number;
    concurrency: number;
    /** First poll interval of an upstream route (UPSTREAM_POLL_MS); grows with the time since the hand-off. */
    upstreamPollMs: number;
  };
  /** Who holds a lease: this engine's id. */
  workerId: string;
}

/** The job a backend sees, from the task row. */
export function jobOf(task: TaskWork, catalog: Catalog): BackendJob {
  const model = catalog.find(task.model);
  return {
    taskId: task.id,
    model: task.model,
    // A model removed from the catalog after the task was created: kind from the stored result shape is unknown; image is the safe guess.
    kind: model?.kind ?? 'image',
    input: JSON.parse(task.input) as Record<string, unknown>,
    media: task.media ? (JSON.parse(task.media) as Record<string, never>) : {},
  };
}

/** How long to wait before asking a route's backend again: ENGINE_POLL_MS for the local one, UPSTREAM_POLL_MS growing by one step per minute (up to 4×) for upstreams. */
export function pollDelay(deps: EngineDeps, kind: string, sinceHandOffMs: number): number {
  if (kind === 'local') return deps.settings.pollMs;
  return deps.settings.upstreamPollMs * Math.min(4, 1 + Math.floor(Math.max(0, sinceHandOffMs) / 60_000));
}

/** Marks the callback outbox row due (issue 6 delivers it); tasks without a callBackUrl have none, so nothing is written for them. */
export async function callbackDue(trx: Kysely<DB>, task: TaskWork, now: number): Promise<void> {
  if (!task.callback_url) return;
  await trx.updateTable('callbacks').set({ due_at: now }).where('task_id', '=', task.id).where('due_at', 'is', null).execute();
}

/** Updates a task this worker still holds the lease of (not a state change: progress, schedule, retry count). */
export async function updateHeld(deps: EngineDeps, taskId: string, patch: Updateable<TasksTable>): Promise<void> {
  await deps.database.write((w) => updateWhere(w, 'tasks', { ...patch, updated_at: deps.clock.now() }, { id: taskId, locked_by: deps.workerId }));
}

/**
 * `run_at = runAt` unless an upstream notice moved run_at during the step (routes/upstream.ts sets
 * it to the arrival time): then it is kept, so the task is looked at again at once. Typed as a
 * number for update patches; it is an SQL expression.
 */
export function keepNotice(task: TaskWork, runAt: number): number {
  return sql<number>`CASE WHEN run_at = ${Number(task.run_at)} THEN CAST(${runAt} AS bigint) ELSE run_at END` as unknown as number;
}

/** Gives the lease back and schedules the next look at the task, never later than its deadline. */
export async function release(deps: EngineDeps, task: TaskWork, afterMs: number, patch: Updateable<TasksTable> = {}): Promise<void> {
  const runAt = Math.min(deps.clock.now() + afterMs, Number(task.deadline_at));
  const next = keepNotice(task, runAt);
  await deps.database.write((w) =>
    w
      .updateTable('tasks')
      .set({ ...patch, locked_until: null, locked_by: null, updated_at: deps.clock.now() })
      .set({ run_at: next })
      .where('id', '=', task.id)
      .where('locked_by', '=', deps.workerId)
      .execute(),
  );
}

/**
 * Fails a task exactly once: compare-and-set to `fail` with the failure fields, the full refund
 * and the callback outbox row in one transaction. False when another worker moved it first.
 */
export async function failTask(deps: EngineDeps, task: TaskWork, kind: FailKind, message: string, from: TaskState = task.state): Promise<boolean> {
  const { code, type } = failureCode(kind);
  const now = deps.clock.now();
  const moved = await deps.database.tx(async (trx) => {
    const ok = await moveTask(
      trx, task.id, from, 'fail', now,
      { fail_code: code, fail_type: type, fail_msg: message, completed_at: now, refunded: 1, locked_until: null, locked_by: null },
      `${code} ${type}: ${message}`,
    );
    if (!ok) return false;
    await deps.ledger.refund(trx, task.id, 'refund', `task ${task.id} failed (${code})`);
    await callbackDue(trx, task, now);
    return true;
  });
  if (moved) {
    finishedSignals(deps, task);
    const backend = deps.backends.get(task.backend);
    // Best effort, bounded: a hanging cancel must not hold the step (the task is already failed and refunded).
    if (backend && task.backend_ref) {
      await withTimeout(backend.cancel(jobOf(task, deps.catalog), task.backend_ref), deps.settings.callTimeoutMs, `backend ${backend.name} cancel`).catch(() => {});
    }
  }
  return moved;
}

/** Tells waiters a task is final and, when it has a callBackUrl, wakes callback delivery. */
export function finishedSignals(deps: EngineDeps, task: TaskWork): void {
  deps.signals.emit('finished', task.id);
  if (task.callback_url) deps.signals.emit('callbackDue', task.id);
}

/** Rejects when `promise` takes longer than `ms`: a hanging backend call must not hold a task forever. */
export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
