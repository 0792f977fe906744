import { sql, type Kysely } from 'kysely';
import type { DB } from '../store/index.js';
import { ACTIVE_STATES } from '../tasks/index.js';
import type { EngineDeps, TaskWork } from './deps.js';
import { keepNotice, leaseUntil } from './lease.js';

/** Ids per renewal statement (SQLite allows 32,766 parameters; PostgreSQL 65,535). */
const CHUNK = 1000;
/** Polls of held tasks at once (outbound connections; docs/operations.md); the others wait their turn in order. */
export const HELD_POLLS_AT_ONCE = 64;

interface Held {
  task: TaskWork;
  timer: NodeJS.Timeout | null;
  /** A poll of it runs or waits for its turn. */
  busy: boolean;
  /** Its poll waits for its turn in the queue (a notice takes it out of turn: the queue then skips it). */
  queued: boolean;
  /** Set by `keep` during that poll: poll again after this many ms. */
  again: number | null;
  /** An upstream notice made it due: poll at once, and the next unchanged poll takes the watch lease again. */
  noticed: boolean;
  /** A renewal found it no longer this worker's while a poll ran. */
  lost: boolean;
}

/**
 * Handed tasks this worker keeps polling from memory while their upstream reports no change
 * (issue 21, decision 2102). A poll that finds nothing new writes nothing: the task stays claimed
 * by this worker's token (`locked_by`) under the watch lease (2 × ENGINE_LEASE_MS), written both
 * to `run_at` (so no claim scans it: the claim reads due tasks only) and to `locked_until` (by the
 * lease clock, PostgreSQL's on PostgreSQL, so a worker whose clock runs ahead cannot take it early).
 * If this worker dies the task becomes due when both have passed and any worker claims it with a
 * new token (fenced: decision 0014). One statement per renewal round pushes both ahead for every
 * held task that has used half of its lease, and says which are still this worker's: a task another
 * worker claimed, or that was cancelled or finished, is let go. An upstream notice sets `run_at` to
 * now (notice.ts), which a renewal never overwrites; its `due` signal (or, if that was lost, the
 * renewal) has the holder poll the task at once. A poll that finds a change runs the usual step and
 * its writes, which end the hold.
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
  /** Held tasks whose poll is due while HELD_POLLS_AT_ONCE run. */
  private readonly queue: Held[] = [];
  /**
   * Tasks this worker is handing to an upstream that sends notices (`expect`): true once a notice
   * made one due before its hand-off was written, so `adopt` polls it at once instead of after the
   * first interval.
   */
  private readonly handing = new Map<string, boolean>();

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
  get leaseMs(): number {
    return 2 * this.deps.settings.leaseMs;
  }

  /** Whether a task not held yet could be kept now. */
  room(): boolean {
    return this.enabled && !this.stopping && this.held.size < this.deps.settings.inFlight;
  }

  /** Whether this worker holds the task under this very claim. */
  holds(task: TaskWork): boolean {
    const entry = this.held.get(task.id);
    return entry !== undefined && entry.task === task && !entry.lost;
  }

  /**
   * The columns that put a task under the watch lease, for a write made while holding it (hand-off,
   * a state or progress change): `run_at` as keepNotice does (a notice that came meanwhile wins).
   */
  leasePatch(w: Kysely<DB>, task: TaskWork, now: number): { run_at: number; locked_until: number; until: number } {
    const until = Math.min(now + this.leaseMs, Number(task.deadline_at));
    return { run_at: keepNotice(task, until), locked_until: leaseUntil(w, now, this.leaseMs) as unknown as number, until };
  }

  /**
   * Holds a task whose write (leasePatch) the caller has just committed; polls it after `afterMs`,
   * or at once when a notice came while it was being handed off (`expect`: that notice's `run_at`
   * was kept by leasePatch, and the poll's `keep` takes the watch lease again).
   */
  adopt(task: TaskWork, afterMs: number): void {
    const early = this.handing.get(task.id) === true;
    this.handing.delete(task.id);
    const entry = this.held.get(task.id);
    if (entry && entry.task === task) {
      entry.again = afterMs;
      return;
    }
    if (entry?.timer) clearTimeout(entry.timer);
    this.held.set(task.id, fresh(task, early));
    this.schedule(task.id, early ? 0 : afterMs);
    this.startRenewals();
  }

  /** The task's hand-off to an upstream that sends notices begins: a notice before `adopt` is remembered. */
  expect(taskId: string): void {
    this.handing.set(taskId, false);
  }

  /** The hand-off ended (adopted or not): nothing more to remember. */
  forget(taskId: string): void {
    this.handing.delete(taskId);
  }

  /**
   * Keeps a task whose poll found nothing new, to poll again after `afterMs`; false when it cannot be
   * kept (watching off or full, stopping, or the task is no longer this claim's): the caller then
   * releases it through the database as before. A task not held yet takes its watch lease with one
   * write (so does a held one after a notice); otherwise a held one costs nothing.
   */
  async keep(task: TaskWork, afterMs: number): Promise<boolean> {
    if (this.stopping) return false;
    const entry = this.held.get(task.id);
    if (entry && entry.task === task) {
      if (entry.lost) return false;
      if (entry.noticed) {
        entry.noticed = false;
        // The notice set run_at to now (or earlier): take the lease again unless the task moved on.
        if (!(await this.take(task, 'noticed'))) return false;
      }
      entry.again = afterMs;
      return true;
    }
    if (!this.enabled || this.held.size >= this.deps.settings.inFlight) return false;
    if (!(await this.take(task, 'claimed'))) return false;
    this.held.set(task.id, fresh(task, false));
    this.schedule(task.id, afterMs);
    this.startRenewals();
    return true;
  }

  /**
   * Writes the watch lease: compare-and-set on the claim's token and on `run_at`, which is as the
   * claim saw it (a notice that made the task due meanwhile wins: the caller's release keeps it), or,
   * after a notice, at most now.
   */
  private async take(task: TaskWork, after: 'claimed' | 'noticed'): Promise<boolean> {
    const { database, clock } = this.deps;
    const now = clock.now();
    const until = Math.min(now + this.leaseMs, Number(task.deadline_at));
    const res = await database.tx(
      (w) =>
        w
          .updateTable('tasks')
          .set({ run_at: until, locked_until: leaseUntil(w, now, this.leaseMs) as unknown as number, updated_at: now })
          .where('id', '=', task.id)
          .where('locked_by', '=', task.lease)
          .where('run_at', after === 'claimed' ? '=' : '<=', after === 'claimed' ? Number(task.run_at) : now)
          .where('state', 'in', ACTIVE_STATES)
          .executeTakeFirst(),
      { atomic: false },
    );
    if (Number(res.numUpdatedRows) !== 1) return false;
    task.run_at = until;
    return true;
  }

  /** Forgets a task that a new claim of this worker holds now. */
  drop(taskId: string): void {
    const entry = this.held.get(taskId);
    if (!entry || entry.busy) return;
    if (entry.timer) clearTimeout(entry.timer);
    this.held.delete(taskId);
  }

  /**
   * An upstream notice made the task due: a held one is polled at once, ahead of the queue (a poll
   * running now is followed by another). True when this worker holds the task or is handing it off:
   * then no claim round is needed for it.
   */
  wake(taskId: string): boolean {
    if (this.handing.has(taskId)) {
      this.handing.set(taskId, true);
      return true;
    }
    const entry = this.held.get(taskId);
    if (!entry || this.stopping) return false;
    entry.noticed = true;
    if (entry.busy && !entry.queued) return true;
    if (entry.timer) clearTimeout(entry.timer);
    entry.timer = null;
    this.launch(entry);
    return true;
  }

  /** Starts keeping tasks (the engine's loop runs). */
  start(): void {
    this.stopping = false;
    this.enabled = true;
  }

  /**
   * Stops polling and, once `steps` (the work loop's stop) and the polls running have ended, gives the held tasks back, due now, in one write per thousand (a rolling
   * restart hands them to the other workers at once). A worker that dies instead leaves them claimed
   * until their watch lease runs out; then any worker takes them.
   */
  async stop(steps?: Promise<unknown>, graceMs?: number): Promise<void> {
    this.stopping = true;
    if (this.renewTimer) clearInterval(this.renewTimer);
    this.renewTimer = null;
    for (const entry of this.held.values()) if (entry.timer) clearTimeout(entry.timer);
    this.queue.length = 0;
    // The work loop's steps too (`steps`): a hand-off finishing now adopts its task, which is then given back with the rest.
    const running = Promise.allSettled([steps, this.renewing, ...this.polling]);
    let timer: NodeJS.Timeout | undefined;
    // A poll still running after the grace is given back with the rest: its writes are fenced.
    await (graceMs === undefined ? running : Promise.race([running, new Promise((resolve) => (timer = setTimeout(resolve, graceMs)))]));
    clearTimeout(timer);
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
              .where('id', 'in', ids(part))
              .where('locked_by', 'in', leases(part))
              .where('state', 'in', ACTIVE_STATES)
              .execute(),
          { atomic: false },
        )
        .catch((e: unknown) => this.deps.log.error({ err: e }, 'engine: giving back the held tasks failed; their watch leases run out instead'));
    }
  }

  private schedule(taskId: string, afterMs: number): void {
    const entry = this.held.get(taskId);
    if (!entry || this.stopping) return;
    entry.timer = setTimeout(() => {
      entry.timer = null;
      entry.busy = true;
      if (this.polling.size < HELD_POLLS_AT_ONCE) return this.launch(entry);
      entry.queued = true;
      this.queue.push(entry);
    }, afterMs);
  }

  private launch(entry: Held): void {
    entry.busy = true;
    entry.queued = false;
    const p = this.run(entry).finally(() => {
      this.polling.delete(p);
      // The next held task whose poll is due, unless a notice had it polled already or it was let go meanwhile.
      for (let next = this.queue.shift(); next && !this.stopping; next = this.queue.shift()) {
        if (!next.queued) continue;
        if (this.held.get(next.task.id) === next) return this.launch(next);
        next.queued = false;
        next.busy = false;
      }
    });
    this.polling.add(p);
  }

  private async run(entry: Held): Promise<void> {
    entry.again = null;
    try {
      await this.poll(entry.task);
    } catch (e) {
      this.deps.log.error({ err: e, taskId: entry.task.id }, 'engine: polling a held task failed');
    } finally {
      entry.busy = false;
    }
    if (this.held.get(entry.task.id) !== entry) return;
    // Kept while stopping: it stays held, so `stop` gives it back with the others.
    if (entry.again === null || entry.lost) this.held.delete(entry.task.id);
    else if (this.stopping) return;
    else if (entry.noticed) this.wake(entry.task.id);
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
    if (this.held.size === 0) {
      if (this.renewTimer) clearInterval(this.renewTimer);
      this.renewTimer = null;
      return;
    }
    const now = this.deps.clock.now();
    const due = [...this.held.values()].filter((e) => Number(e.task.run_at) - now < this.leaseMs / 2);
    for (let i = 0; i < due.length; i += CHUNK) {
      try {
        await this.renewPart(due.slice(i, i + CHUNK), now);
      } catch (e) {
        // The leases run on; the next round tries again.
        this.deps.countHeartbeatFailure('error');
        this.deps.log.error({ err: e }, 'engine: renewing the held tasks failed');
      }
    }
  }

  private async renewPart(part: Held[], now: number): Promise<void> {
    const { database } = this.deps;
    const until = now + this.leaseMs;
    const rows = await database.tx(
      (w) =>
        w
          .updateTable('tasks')
          .set({
            run_at: sql<number>`CASE WHEN deadline_at < ${until} THEN deadline_at ELSE CAST(${until} AS bigint) END` as unknown as number,
            locked_until: leaseUntil(w, now, this.leaseMs) as unknown as number,
          })
          .where('id', 'in', ids(part))
          .where('locked_by', 'in', leases(part))
          .where('run_at', '>', now)
          .where('state', 'in', ACTIVE_STATES)
          .returning(['id', 'run_at'])
          .execute(),
      { atomic: false },
    );
    const kept = new Set(rows.map((r) => r.id));
    for (const r of rows) {
      const entry = this.held.get(r.id);
      if (entry) entry.task.run_at = Number(r.run_at);
    }
    const missing = part.filter((e) => !kept.has(e.task.id) && this.held.get(e.task.id) === e);
    if (missing.length === 0) return;
    // Still this worker's and active: a notice made it due (its signal did not come): poll it now. Else let it go.
    const noticed = await database.db
      .selectFrom('tasks')
      .select('id')
      .where('id', 'in', ids(missing))
      .where('locked_by', 'in', leases(missing))
      .where('state', 'in', ACTIVE_STATES)
      .execute();
    const ours = new Set(noticed.map((r) => r.id));
    for (const e of missing) {
      if (this.held.get(e.task.id) !== e) continue;
      if (ours.has(e.task.id)) {
        this.wake(e.task.id);
        continue;
      }
      if (e.timer) clearTimeout(e.timer);
      if (e.busy) e.lost = true;
      else this.held.delete(e.task.id);
    }
  }
}

const fresh = (task: TaskWork, noticed: boolean): Held => ({ task, timer: null, busy: false, queued: false, again: null, noticed, lost: false });
const ids = (part: Held[]) => part.map((e) => e.task.id);
const leases = (part: Held[]) => [...new Set(part.map((e) => e.task.lease))];
