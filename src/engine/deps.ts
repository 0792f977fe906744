import type { Kysely, Selectable } from 'kysely';
import type { Backend } from '../backends/index.js';
import type { Ledger } from '../billing/index.js';
import type { Catalog } from '../catalog/index.js';
import type { Clock } from '../clock.js';
import type { Files } from '../files/index.js';
import type { Database } from '../store/index.js';
import type { DB, TasksTable } from '../store/index.js';
import type { WorkLog } from '../store/index.js';
import { jobOf, type TaskSignals } from '../tasks/index.js';
import type { RouteHealth } from './routing.js';

/** How a submit to a route ended: taken, surely not taken (retry or fail over), refused, or unclear (not repeated). */
export type SubmitOutcome = 'accepted' | 'not_accepted' | 'refused' | 'unclear';

/** Why a lease renewal failed: the write itself failed (database), or another worker holds the task now. */
export type HeartbeatFailure = 'error' | 'lost';

/** A claimed task row and the token of the claim that holds it (also in `locked_by` while the lease lasts). */
export type TaskWork = Selectable<TasksTable> & { seq: number; lease: string };

/** What a step uses of the engine's held tasks (watch.ts). */
export interface HeldTasks {
  /** Keeps a handed task whose poll found nothing new, polling it again after `afterMs`; false: release it as before. */
  keep(task: TaskWork, afterMs: number): Promise<boolean>;
  /** Whether a task not held yet could be kept now. */
  room(): boolean;
  /** Whether this claim's task is held. */
  holds(task: TaskWork): boolean;
  /** The columns of a write that keeps (or puts) the task under the watch lease; `until` is its new run_at. */
  leasePatch(w: Kysely<DB>, task: TaskWork, now: number): { run_at: number; locked_until: number; until: number };
  /** Holds a task whose leasePatch write has committed; polls it after `afterMs` (at once if a notice came during its hand-off). */
  adopt(task: TaskWork, afterMs: number): void;
  /** A hand-off to an upstream that sends notices begins: a notice that comes before `adopt` has the task polled at once. */
  expect(taskId: string): void;
  /** That hand-off ended, adopted or not. */
  forget(taskId: string): void;
}

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
  /**
   * PUBLIC_BASE_URL whatever UPSTREAM_WEBHOOKS says: the base of the notify address given to a job
   * whose upstream refuses one without it (`Backend.needsCallback`, decision 2500); its polling is
   * unchanged. Absent: such a job gets none.
   */
  publicBase?: string;
  signals: TaskSignals;
  /** Told the outcome of every submit to a route (metrics). */
  countSubmit: (route: string, outcome: SubmitOutcome) => void;
  /** Told every failed lease renewal (metrics). */
  countHeartbeatFailure: (reason: HeartbeatFailure) => void;
  log: WorkLog;
  settings: {
    pollMs: number;
    leaseMs: number;
    maxAttempts: number;
    retryMs: number;
    callTimeoutMs: number;
    concurrency: number;
    /** First poll interval of an upstream route (UPSTREAM_POLL_MS); grows with the time since the hand-off. */
    upstreamPollMs: number;
    /**
     * Interval of the safety-net polls of a route whose upstream sends completion notices, while
     * UPSTREAM_WEBHOOKS is on (UPSTREAM_FALLBACK_POLL_MS; decision 2102): the notice makes the task
     * due, the polls only catch a notice that never came. Absent: polled as any other route.
     */
    fallbackPollMs?: number;
    /** Handed tasks one worker keeps polling from memory (ENGINE_IN_FLIGHT; 0: every poll goes through the database). */
    inFlight: number;
  };
  /** This engine's id; every claim's lease token starts with it. */
  workerId: string;
  /** Handed tasks polled from memory (watch.ts); absent: every poll goes through the database. */
  watch?: HeldTasks;
}

export { jobOf };

/**
 * How long to wait before asking a route's backend again: ENGINE_POLL_MS for the local one,
 * UPSTREAM_POLL_MS growing by one step per minute (up to 4×) for upstreams. A route whose upstream
 * tells of a job's end (`Backend.notices`) while UPSTREAM_WEBHOOKS is on is asked at
 * UPSTREAM_POLL_MS after the hand-off (`polls` 0: an early failure or the start of the generation
 * shows soon), then every UPSTREAM_FALLBACK_POLL_MS (never more often than it would be otherwise).
 */
export function pollDelay(deps: EngineDeps, kind: string, sinceHandOffMs: number, backend?: Pick<Backend, 'notices'>, polls = 1): number {
  const { settings } = deps;
  if (kind === 'local') return settings.pollMs;
  const usual = settings.upstreamPollMs * Math.min(4, 1 + Math.floor(Math.max(0, sinceHandOffMs) / 60_000));
  if (polls === 0 || !backend?.notices || !deps.webhookBase || settings.fallbackPollMs === undefined) return usual;
  return Math.max(usual, settings.fallbackPollMs);
}

/** Rejects when `promise` takes longer than `ms`: a hanging backend call must not hold a task forever. */
export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
