import { sql } from 'kysely';
import { ACTIVE_STATES } from '../tasks/index.js';
import type { EngineDeps, TaskWork } from './deps.js';

/** Ids per renewal statement (SQLite allows 32,766 parameters; PostgreSQL 65,535). */
const CHUNK = 1000;

interface Held {
  task: TaskWork;
  timer: NodeJS.Timeout | null;
  /** A poll of it runs now. */
  busy: boolean;
  /** Set by `keep` during that poll: poll again after this many ms. */
  again: number | null;
  /** A renewal found it no longer this worker's while a poll ran. */
  lost: boolean;
}

/**
 * Handed tasks this worker keeps polling from memory while their upstream reports no change
 * (issue 21, decision 2102). A poll that finds nothing new writes nothing: the task stays claimed
 * by this worker's token (`locked_by`) and its `run_at`, pushed ahead by the watch lease
 * (2 × ENGINE_LEASE_MS), is the lease: no claim scans it (the claim reads due tasks only), and if
 * this worker dies the task becomes due when that time passes and any worker claims it with a new
 * token (fenced: decision 0014). One statement per renewal round pushes `run_at` of every held task
 * whose lease is half used, and reports which are still this worker's: a task claimed by another
 * worker, cancelled, or made due by an upstream notice (its `run_at` set to now, which a renewal
 * never overwrites) is let go. A poll that finds a change runs the usual step and its writes.
 */
export class Watches {
  private readonly held = new Map<string, Held>();
  private renewTimer: NodeJS.Timeout | null = null;
  private stopping = false;
  private renewing: Promise<void> | null = null;
  /** Only a running engine loop keeps tasks (a test's `tick` polls through the database as before). */
  private enabled = false;
  /** Polls of held tasks running now (stop waits for them). */
  private readonly polling = new Set<Promise<void>>();

  constructor(
    private readonly deps: EngineDeps,
    /** Polls a held task (the engine's step, which calls `keep` again when nothing changed). */
    private readonly poll: (task: TaskWork) => Promise<void>,
  ) {}

  /** Tasks held now. */
  get size(): number {
    return this.held.size;
  }

  /** The watch lease: how long a held task stays this worker's without a renewal. */
  private get leaseMs(): number {
    return 2 * this.deps.settings.leaseMs;
  }

  /**
   * Keeps a task whose poll found nothing new, to poll again after `afterMs`; false when it cannot be
   * kept (watching off or full, stopping, or the task is no longer this claim's): the caller then
   * releases it through the database as before. A task not held yet takes its watch lease with one
   * write; a held one costs nothing.
   */
  async keep(task: TaskWork, afterMs: number): Promise<boolean> {
    if (this.stopping) return false;
    const entry = this.held.get(task.id);
    if (entry && entry.task === task) {
      if (entry.lost) return false;
      entry.again = afterMs;
      return true;
    }
    if (!this.enabled || this.held.size >= this.deps.settings.inFlight) return false;
    const { database, clock } = this.deps;
    const now = clock.now();
    const until = Math.min(now + this.leaseMs, Number(task.deadline_at));
    // Compare-and-set on the claim's token and on run_at as the claim saw it: a notice that made the task due meanwhile wins (the caller's release keeps it).
    const res = await database.tx(
      (w) =>
        w
          .updateTable('tasks')
          .set({ run_at: until, locked_until: null, updated_at: now })
          .where('id', '=', task.id)
          .where('locked_by', '=', task.lease)
          .where('run_at', '=', Number(task.run_at))
          .executeTakeFirst(),
      { atomic: false },
    );
    if (Number(res.numUpdatedRows) !== 1) return false;
    task.run_at = until;
    task.locked_until = null;
    this.held.set(task.id, { task, timer: null, busy: false, again: null, lost: false });
    this.schedule(task.id, afterMs);
    this.startRenewals();
    return true;
  }

  /** Forgets a task another claim of this worker now holds, or that an upstream notice made due (the claim that follows takes it). */
  drop(taskId: string): void {
    const entry = this.held.get(taskId);
    if (!entry || entry.busy) return;
    if (entry.timer) clearTimeout(entry.timer);
    this.held.delete(taskId);
  }

  /** Starts keeping tasks (the engine's loop runs). */
  start(): void {
    this.stopping = false;
    this.enabled = true;
  }

  /**
   * Stops polling and gives the held tasks back, due now, in one write per thousand (a rolling
   * restart hands them to the other workers at once). A worker that dies instead leaves them claimed
   * until their watch lease runs out; then any worker takes them.
   */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.renewTimer) clearInterval(this.renewTimer);
    this.renewTimer = null;
    for (const entry of this.held.values()) if (entry.timer) clearTimeout(entry.timer);
    await Promise.allSettled([this.renewing, ...this.polling]);
    const held = [...this.held.values()];
    this.held.clear();
    const now = this.deps.clock.now();
    for (let i = 0; i < held.length; i += CHUNK) {
      const part = held.slice(i, i + CHUNK);
      await this.deps.database
        .tx(
          (w) =>
            w
              .updateTable('tasks')
              .set({ run_at: now, locked_by: null, locked_until: null })
              .where(
                'id',
                'in',
                part.map((e) => e.task.id),
              )
              .where('locked_by', 'in', [...new Set(part.map((e) => e.task.lease))])
              .where('run_at', '>', now)
              .execute(),
          { atomic: false },
        )
        .catch((e: unknown) => this.deps.log.error({ err: e }, 'engine: giving back the held tasks failed; their watch leases run out instead'));
    }
  }

  private schedule(taskId: string, afterMs: number): void {
    const entry = this.held.get(taskId);
    if (!entry || this.stopping) return;
    entry.timer = setTimeout(
      () => {
        const p = this.run(entry).finally(() => this.polling.delete(p));
        this.polling.add(p);
      },
      Math.max(0, afterMs),
    );
  }

  private async run(entry: Held): Promise<void> {
    entry.timer = null;
    entry.busy = true;
    entry.again = null;
    try {
      await this.poll(entry.task);
    } catch (e) {
      this.deps.log.error({ err: e, taskId: entry.task.id }, 'engine: polling a held task failed');
    } finally {
      entry.busy = false;
    }
    if (this.held.get(entry.task.id) !== entry) return;
    if (entry.again === null || entry.lost || this.stopping) this.held.delete(entry.task.id);
    else this.schedule(entry.task.id, entry.again);
  }

  private startRenewals(): void {
    if (this.renewTimer || this.stopping) return;
    this.renewTimer = setInterval(
      () => {
        this.renewing ??= this.renew().finally(() => (this.renewing = null));
      },
      Math.max(50, Math.floor(this.leaseMs / 4)),
    );
    this.renewTimer.unref?.();
  }

  /** Pushes the watch lease of every held task that has used half of it; lets go of those no longer this worker's. */
  private async renew(): Promise<void> {
    const { database, clock } = this.deps;
    if (this.held.size === 0) {
      if (this.renewTimer) clearInterval(this.renewTimer);
      this.renewTimer = null;
      return;
    }
    const now = clock.now();
    const due = [...this.held.values()].filter((e) => Number(e.task.run_at) - now < this.leaseMs / 2);
    for (let i = 0; i < due.length; i += CHUNK) {
      const part = due.slice(i, i + CHUNK);
      const until = now + this.leaseMs;
      let kept: Set<string>;
      try {
        const rows = await database.tx(
          (w) =>
            w
              .updateTable('tasks')
              .set({ run_at: sql<number>`CASE WHEN deadline_at < ${until} THEN deadline_at ELSE CAST(${until} AS bigint) END` as unknown as number })
              .where(
                'id',
                'in',
                part.map((e) => e.task.id),
              )
              .where('locked_by', 'in', [...new Set(part.map((e) => e.task.lease))])
              .where('run_at', '>', now)
              .where('state', 'in', ACTIVE_STATES)
              .returning(['id', 'run_at'])
              .execute(),
          { atomic: false },
        );
        kept = new Set(rows.map((r) => r.id));
        for (const r of rows) {
          const entry = this.held.get(r.id);
          if (entry) entry.task.run_at = Number(r.run_at);
        }
      } catch (e) {
        // The leases run on; the next round tries again.
        this.deps.countHeartbeatFailure('error');
        this.deps.log.error({ err: e }, 'engine: renewing the held tasks failed');
        continue;
      }
      for (const e of part) {
        if (kept.has(e.task.id) || this.held.get(e.task.id) !== e) continue;
        // Another worker's now, cancelled, finished, or made due by a notice: its next writes would not match anyway.
        if (e.timer) clearTimeout(e.timer);
        if (!e.busy) this.held.delete(e.task.id);
        else e.lost = true;
      }
    }
  }
}
