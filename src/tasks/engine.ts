import { randomId } from '../ids.js';
import { ACTIVE_STATES } from './states.js';
import { stepTask } from './step.js';
import { sweepExpired } from './sweep.js';
import { updateHeld, type EngineDeps, type TaskWork } from './work.js';

/** The little of a logger the engine uses (pino's app.log fits). */
export interface EngineLog {
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

const silent: EngineLog = { warn: () => {}, error: () => {} };
/** How often (by the engine's clock) expired files are looked for. */
const SWEEP_EVERY_MS = 10_000;

export type EngineOptions = Omit<EngineDeps, 'workerId'>;

/**
 * The worker loop. Work lives in the database: a task is due when `run_at` has come and nobody
 * holds a live lease on it. A claim takes a lease (`locked_until`) in one transaction (FOR UPDATE
 * SKIP LOCKED on PostgreSQL; SQLite has one writer), so several processes share the work; a
 * process that dies simply lets its leases run out and another (or its restart) takes over.
 */
export class Engine {
  readonly workerId = randomId('w_', 9);
  private readonly deps: EngineDeps;
  private readonly active = new Set<Promise<void>>();
  private running = false;
  private loopDone: Promise<void> | null = null;
  private wakeUp: (() => void) | null = null;
  private nextSweep = 0;
  private log: EngineLog = silent;

  constructor(options: EngineOptions) {
    this.deps = { ...options, workerId: this.workerId };
    options.signals.on('created', () => this.wake());
  }

  /** Starts the loop (idempotent). */
  start(log?: EngineLog): void {
    if (this.running) return;
    if (log) this.log = log;
    this.running = true;
    this.loopDone = this.loop();
  }

  /** Stops claiming and waits for the steps in progress (their leases are released by the steps themselves). */
  async stop(): Promise<void> {
    this.running = false;
    this.wake();
    await this.loopDone;
    await Promise.allSettled([...this.active]);
  }

  /** One round without the loop: claims what is due (up to the concurrency), runs those steps and the sweep. */
  async tick(): Promise<number> {
    const claimed = await this.claim(this.deps.settings.concurrency);
    await Promise.all(claimed.map((t) => this.run(t)));
    await this.sweep(true);
    return claimed.length;
  }

  private wake(): void {
    this.wakeUp?.();
  }

  private async loop(): Promise<void> {
    const { settings } = this.deps;
    while (this.running) {
      let full = false;
      try {
        const free = settings.concurrency - this.active.size;
        if (free > 0) {
          const claimed = await this.claim(free);
          for (const task of claimed) this.launch(task);
          full = claimed.length === free;
        } else full = true;
        await this.sweep(false);
      } catch (e) {
        this.log.error({ err: e }, 'engine: claim or sweep failed');
      }
      if (!this.running) break;
      // Busy: go again as soon as a slot frees. Idle: look again after the poll interval or on a wake-up.
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, full && this.active.size > 0 ? 60_000 : settings.pollMs);
        this.wakeUp = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wakeUp = null;
    }
  }

  private launch(task: TaskWork): void {
    const p = this.run(task).finally(() => {
      this.active.delete(p);
      this.wake();
    });
    this.active.add(p);
  }

  /** Runs one step while keeping the lease alive, so a long render is not taken over by another worker. */
  private async run(task: TaskWork): Promise<void> {
    const { leaseMs } = this.deps.settings;
    const beat = setInterval(() => {
      updateHeld(this.deps, task.id, { locked_until: this.deps.clock.now() + leaseMs }).catch(() => {});
    }, Math.max(100, Math.floor(leaseMs / 3)));
    try {
      await stepTask(this.deps, task);
    } catch (e) {
      // A step that failed to write (database down): the lease runs out and the task is tried again.
      this.log.error({ err: e, taskId: task.id }, 'engine: step failed');
    } finally {
      clearInterval(beat);
    }
  }

  private async sweep(force: boolean): Promise<void> {
    const now = this.deps.clock.now();
    if (!force && now < this.nextSweep) return;
    this.nextSweep = now + SWEEP_EVERY_MS;
    await sweepExpired(this.deps);
  }

  /** Takes leases on up to `n` due tasks, oldest due first. */
  private async claim(n: number): Promise<TaskWork[]> {
    const { database, clock, settings } = this.deps;
    const now = clock.now();
    return database.tx(async (trx) => {
      let due = trx
        .selectFrom('tasks')
        .select('seq')
        .where('state', 'in', ACTIVE_STATES)
        .where('run_at', '<=', now)
        .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<=', now)]))
        .orderBy('run_at')
        .limit(n);
      if (database.dialect === 'postgres') due = due.forUpdate().skipLocked();
      const rows = await trx
        .updateTable('tasks')
        .set({ locked_until: now + settings.leaseMs, locked_by: this.workerId })
        .where('seq', 'in', due)
        .returningAll()
        .execute();
      return rows.map((r) => ({ ...r, seq: Number(r.seq) })) as TaskWork[];
    });
  }
}

