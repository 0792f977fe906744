import type { Database } from '../store/index.js';
import type { TaskSignals } from './tasks.js';

/** The final states of the task lifecycle (states.ts: the states no move leaves). */
const FINAL = ['success', 'fail'] as const;
/** Ids per shared check (SQLite allows 32,766 parameters; PostgreSQL 65,535). */
const CHUNK = 1000;

/** One waiting caller: `done(true)` when its task is final, `done(false)` when its time ran out or it was aborted. */
type Done = (final: boolean) => void;

/**
 * The waits of one process for tasks to end (Prefer: wait, the OpenAI image endpoints). A task's
 * `finished` signal ends its waits at once: it comes from this process's engine, or from another
 * process through the wake-ups (Redis pub/sub or PostgreSQL LISTEN/NOTIFY, engine/wakeups.ts). Where
 * no signal crosses processes (SQLite with a separate worker) or one was lost, one shared check per
 * process, every `pollMs` while anyone waits, reads which of all the waited tasks are final, a
 * thousand ids per query: the database sees the same load for one waiter as for a thousand. A new
 * waiter is checked at the next turn of the event loop, with the others that came in the same turn,
 * so a task that was already final ends its wait at once. A waiter costs a map entry, a closure and
 * a timer.
 */
export class Waiters {
  private readonly waiting = new Map<string, Set<Done>>();
  /** Tasks whose first check is pending (the next turn of the event loop). */
  private fresh = new Set<string>();
  private timer: NodeJS.Timeout | null = null;
  private checking = false;
  private readonly onFinished = (id: string) => this.end(id, true);

  constructor(
    private readonly database: Database,
    private readonly signals: TaskSignals,
    private readonly pollMs: number,
  ) {}

  /** Tasks waited for now (tests, the bench). */
  get size(): number {
    return this.waiting.size;
  }

  /** Resolves true once the task is final, false when `timeoutMs` passes first or `signal` aborts. */
  wait(taskId: string, timeoutMs: number, signal?: AbortSignal): Promise<boolean> {
    if (signal?.aborted || !(timeoutMs > 0)) return Promise.resolve(false);
    return new Promise<boolean>((resolve) => {
      const done: Done = (final) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', abort);
        this.remove(taskId, done);
        resolve(final);
      };
      const abort = () => done(false);
      const timer = setTimeout(abort, timeoutMs);
      timer.unref?.();
      signal?.addEventListener('abort', abort, { once: true });
      this.add(taskId, done);
    });
  }

  private add(taskId: string, done: Done): void {
    if (this.waiting.size === 0) this.signals.on('finished', this.onFinished);
    let set = this.waiting.get(taskId);
    if (!set) this.waiting.set(taskId, (set = new Set()));
    set.add(done);
    if (this.fresh.size === 0) setImmediate(() => void this.checkFresh());
    this.fresh.add(taskId);
    if (!this.timer) {
      this.timer = setInterval(() => void this.checkAll(), this.pollMs);
      this.timer.unref?.();
    }
  }

  private remove(taskId: string, done: Done): void {
    const set = this.waiting.get(taskId);
    if (!set?.delete(done) || set.size > 0) return;
    this.waiting.delete(taskId);
    if (this.waiting.size > 0) return;
    this.signals.off('finished', this.onFinished);
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Ends every wait for the task. */
  private end(taskId: string, final: boolean): void {
    const set = this.waiting.get(taskId);
    if (set) for (const done of [...set]) done(final);
  }

  private async checkFresh(): Promise<void> {
    const ids = [...this.fresh].filter((id) => this.waiting.has(id));
    this.fresh = new Set();
    await this.check(ids);
  }

  /** The shared check: skipped while the previous one still runs (a slow database is not asked twice as often). */
  private async checkAll(): Promise<void> {
    if (this.checking) return;
    this.checking = true;
    try {
      await this.check([...this.waiting.keys()]);
    } finally {
      this.checking = false;
    }
  }

  private async check(ids: string[]): Promise<void> {
    for (let i = 0; i < ids.length; i += CHUNK) {
      try {
        const rows = await this.database.db
          .selectFrom('tasks')
          .select('id')
          .where('id', 'in', ids.slice(i, i + CHUNK))
          .where('state', 'in', FINAL)
          .execute();
        for (const r of rows) this.end(r.id, true);
      } catch {
        // The next shared check asks again; a wait runs out at its timeout at worst.
      }
    }
  }
}

/**
 * Resolves true once the task is in a final state (success or fail, states.ts), false when
 * `timeoutMs` passes first or `signal` aborts. Works when the task runs in another process (worker
 * role, other API process) on SQLite and PostgreSQL: see Waiters. `services` is the process's
 * Services (only its `tasks` is read). It does not check the task's account: the caller reads the
 * task with the account afterwards (Tasks.get / viewJson), which answers 404 for another's task.
 */
export function waitForTask(services: { tasks: { waiters: Waiters } }, taskId: string, timeoutMs: number, signal?: AbortSignal): Promise<boolean> {
  return services.tasks.waiters.wait(taskId, timeoutMs, signal);
}
