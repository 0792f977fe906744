import { sql, type Kysely } from 'kysely';
import { randomId } from '../ids.js';
import { dialectOf, prepared } from '../store/index.js';
import type { DB } from '../store/index.js';
import { WorkLoop, type WorkLog } from '../store/index.js';
import { ACTIVE_STATE_SQL } from './predicates.js';
import { stepTask } from './step.js';
import { sweepExpired } from './sweep.js';
import type { EngineDeps, TaskWork } from './deps.js';
import { holderOf, leaseNow, leaseUntil, renewLease } from './lease.js';
import { Watches } from './watch.js';
import { tracing } from '../tracing/index.js';

/** The little of a logger the engine uses (pino's app.log fits). */
export type EngineLog = WorkLog;
/**
 * Leases due tasks (oldest due first) that nobody holds a live lease on; SKIP LOCKED on PostgreSQL so
 * workers do not queue behind each other. The claim reads the partial index tasks_active_due
 * (migration 006) in `run_at` order and stops after `limit` free rows, so its cost does not grow
 * with the backlog. Its state test is the index's own literal predicate; SQLite's planner still
 * prefers an index on `state` and then sorts every due task, so there the index is named (INDEXED BY).
 * The claim writes its own token to `locked_by` (the fence of every later write, lease.ts), judges
 * and sets `locked_until` by the lease clock (PostgreSQL's on PostgreSQL) and counts the attempt.
 */
export function claimQuery(trx: Kysely<DB>, now: unknown, limit: unknown, leaseMs: unknown, lease: string) {
  let due = trx
    .selectFrom('tasks')
    .select('seq')
    .where(sql.raw<boolean>(ACTIVE_STATE_SQL))
    .where('run_at', '<=', now as unknown as number)
    .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<=', leaseNow(trx, now))]))
    .orderBy('run_at')
    .limit(limit as unknown as number);
  const postgres = dialectOf(trx) === 'postgres';
  if (postgres) due = due.forUpdate().skipLocked();
  const claim = trx
    .updateTable('tasks')
    .set({ locked_until: leaseUntil(trx, now, leaseMs) as unknown as number, locked_by: lease, attempts: sql<number>`attempts + 1` as unknown as number })
    .where('seq', 'in', due)
    .returningAll();
  return postgres ? claim : { compile: () => indexedBy(claim.compile(), 'tasks_active_due') };
}

const claimStatement = prepared(4, claimQuery);

/** The compiled claim with SQLite's INDEXED BY after the subquery's table. */
function indexedBy<C extends { sql: string }>(compiled: C, index: string): C {
  const from = 'from "tasks" where';
  if (!compiled.sql.includes(from)) throw new Error(`the engine's claim no longer reads ${from}: ${compiled.sql}`);
  return { ...compiled, sql: compiled.sql.replace(from, `from "tasks" indexed by "${index}" where`) };
}

/** How often (by the engine's clock) expired files are looked for. */
const SWEEP_EVERY_MS = 10_000;

/** What the engine is built from; the counters default to none. */
export type EngineOptions = Omit<EngineDeps, 'workerId' | 'log' | 'countSubmit' | 'countHeartbeatFailure' | 'watch'> &
  Partial<Pick<EngineDeps, 'countSubmit' | 'countHeartbeatFailure'>>;

/**
 * The worker loop. Work lives in the database: a task is due when `run_at` has come and nobody
 * holds a live lease on it. A claim takes a lease (`locked_until`) in one transaction (FOR UPDATE
 * SKIP LOCKED on PostgreSQL; SQLite has one writer), so several processes share the work; a
 * process that dies simply lets its leases run out and another (or its restart) takes over. Each
 * claim has its own token, and every write of a step matches it (decision 0014).
 */
export class Engine {
  readonly workerId = randomId('w_', 9);
  private readonly deps: EngineDeps;
  private readonly work: WorkLoop<TaskWork>;
  /** Handed tasks polled from memory while nothing changes (decision 2102). */
  private readonly watches: Watches;
  private nextSweep = 0;
  private claims = 0;

  constructor(options: EngineOptions) {
    const log: EngineLog = { warn: (obj, msg) => this.work.log.warn(obj, msg), error: (obj, msg) => this.work.log.error(obj, msg) };
    this.deps = {
      countSubmit: () => {},
      countHeartbeatFailure: () => {},
      ...options,
      log,
      workerId: this.workerId,
    };
    this.watches = new Watches(this.deps, (task) => this.run(task));
    this.deps.watch = this.watches;
    this.work = new WorkLoop<TaskWork>({
      name: 'engine',
      concurrency: options.settings.concurrency,
      pollMs: options.settings.pollMs,
      claim: (n) => this.claim(n),
      run: (task) => this.run(task),
      afterRound: () => this.sweep(false),
    });
    options.signals.on('created', () => this.work.wake());
    options.signals.on('due', (taskId) => {
      // A notice made the task due: if this worker holds it (or is handing it off), it polls it at once
      // (no claim can take it while its watch lease lasts), and a claim round would find nothing.
      if (!this.watches.wake(taskId)) this.work.wake();
    });
  }

  /** Handed tasks this process polls from memory now. */
  get held(): number {
    return this.watches.size;
  }

  /** Claim rounds the loop has finished (tests wait on it instead of on time). */
  get rounds(): number {
    return this.work.rounds;
  }

  /** Starts the loop (idempotent). */
  start(log?: EngineLog): void {
    this.watches.start();
    this.work.start(log);
  }

  /**
   * Stops claiming and waits for the steps in progress (their leases are released by the steps
   * themselves), for at most `graceMs` when given (decision 2602); then hands the tasks it holds
   * back. A step still running after the grace keeps its lease until it runs out.
   */
  async stop(graceMs?: number): Promise<void> {
    await this.watches.stop(this.work.stop(graceMs), graceMs);
  }

  /** Steps running now. */
  get busy(): number {
    return this.work.busy;
  }

  /** One round without the loop: claims what is due (up to the concurrency), runs those steps and the sweep. */
  async tick(): Promise<number> {
    const claimed = await this.claim(this.deps.settings.concurrency);
    await Promise.all(claimed.map((t) => this.run(t)));
    await this.sweep(true);
    return claimed.length;
  }

  /** Runs one step of a claimed task while keeping its lease alive, so a long render is not taken over by another worker. */
  async run(task: TaskWork): Promise<void> {
    const { leaseMs } = this.deps.settings;
    let done = false;
    const beat = setInterval(
      () =>
        void this.renew(
          task,
          () => done,
          () => clearInterval(beat),
        ),
      Math.max(100, Math.floor(leaseMs / 3)),
    );
    try {
      // The step joins the trace of the request that created the task (decision 2603); off, a direct call.
      await tracing.span(
        'engine.step',
        { 'gengate.task_id': task.id, 'gengate.state': task.state },
        () => stepTask(this.deps, task),
        tracing.contextOf(task.trace_parent),
      );
    } catch (e) {
      // A step that failed to write (database down): the lease runs out and the task is tried again.
      this.work.log.error({ err: e, taskId: task.id }, 'engine: step failed');
    } finally {
      done = true;
      clearInterval(beat);
    }
  }

  /** One heartbeat: a failed write is logged and counted; a lease found taken over stops the beats (the step's writes will not match either). */
  private async renew(task: TaskWork, done: () => boolean, stop: () => void): Promise<void> {
    try {
      if (await renewLease(this.deps, task)) return;
      stop();
      // The step may have given the lease back while this renewal was on its way: that is no loss.
      const holder = done() ? null : await holderOf(this.deps, task.id);
      if (holder === null) return;
      this.deps.countHeartbeatFailure('lost');
      this.work.log.warn({ taskId: task.id, lease: task.lease, holder }, 'engine: lease lost; another worker holds the task now');
    } catch (e) {
      this.deps.countHeartbeatFailure('error');
      this.work.log.error({ err: e, taskId: task.id }, 'engine: lease renewal failed');
    }
  }

  private async sweep(force: boolean): Promise<void> {
    const now = this.deps.clock.now();
    if (!force && now < this.nextSweep) return;
    this.nextSweep = now + SWEEP_EVERY_MS;
    await sweepExpired(this.deps);
  }

  /** Takes leases on up to `n` due tasks, oldest due first, under a new claim token; `run` works them. */
  async claim(n: number): Promise<TaskWork[]> {
    const { database, clock, settings } = this.deps;
    const now = clock.now();
    const lease = `${this.workerId}.${++this.claims}`;
    const claimed = await database.tx(async (trx) => {
      const { rows } = await claimStatement(trx, now, n, settings.leaseMs, lease);
      return rows.map((r) => ({ ...r, seq: Number(r.seq), lease }));
    });
    // A task this worker held before is the new claim's now.
    for (const t of claimed) this.watches.drop(t.id);
    return claimed;
  }
}
