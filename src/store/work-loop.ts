/** The little of a logger a work loop uses (pino's app.log fits). */
export interface WorkLog {
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** What a work loop claims and runs. Work lives in the database; `claim` takes leases on up to `n` due items. */
export interface WorkLoopSpec<T> {
  name: string;
  concurrency: number;
  pollMs: number;
  claim(n: number): Promise<T[]>;
  run(item: T): Promise<void>;
  /** Runs after each claim round (the engine's expiry sweep). */
  afterRound?(): Promise<void>;
  /** Claim only when this many slots are free (batches claims), unless nothing runs at all. */
  minFreeToClaim?: number;
}

const silent: WorkLog = { warn: () => {}, error: () => {} };

/**
 * The loop shared by the task engine and the callback worker: claim what is due up to the free
 * slots, run each item concurrently, and then go again at once if more may be due, wait for a
 * slot when full, or sleep `pollMs` (or until woken) when idle.
 */
export class WorkLoop<T> {
  private readonly active = new Set<Promise<void>>();
  private running = false;
  private loopDone: Promise<void> | null = null;
  private wakeUp: (() => void) | null = null;
  /** The stop under way: a second stop (the close after a stop with a grace time) waits for the same one. */
  private stopping: Promise<void> | null = null;
  /** A wake() came since the current round began: new work may have been committed after its claim looked. */
  private woken = false;
  log: WorkLog = silent;
  /** Claim rounds finished so far: tests wait on it to know the loop had its chance (and is now waiting). */
  rounds = 0;

  constructor(private readonly spec: WorkLoopSpec<T>) {}

  /** Starts the loop (idempotent). */
  start(log?: WorkLog): void {
    if (this.running) return;
    if (log) this.log = log;
    this.running = true;
    this.stopping = null;
    this.loopDone = this.loop();
  }

  /**
   * Stops claiming and waits for the items in progress: all of them, or for at most `graceMs`
   * (a stop of the process, decision 2602), after which items still running are left to their
   * leases (they run on until the process exits; their writes are fenced). A later stop returns
   * with the first one.
   */
  stop(graceMs?: number): Promise<void> {
    this.running = false;
    this.wake();
    this.stopping ??= this.drain(graceMs);
    return this.stopping;
  }

  /** Items still running (a stop's log says how many it left). */
  get busy(): number {
    return this.active.size;
  }

  private async drain(graceMs: number | undefined): Promise<void> {
    await this.loopDone;
    const all = Promise.allSettled([...this.active]);
    if (graceMs === undefined) {
      await all;
      return;
    }
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([all, new Promise((resolve) => (timer = setTimeout(resolve, graceMs)))]);
    clearTimeout(timer);
  }

  /** Ends the current wait: new work may be due. */
  wake(): void {
    this.woken = true;
    this.wakeUp?.();
  }

  private async loop(): Promise<void> {
    const { concurrency, pollMs, minFreeToClaim = 1 } = this.spec;
    while (this.running) {
      // Items that finished in the same turn (their transactions commit together) all free their
      // slots before the claim: one claim for them all instead of one each.
      await new Promise<void>((resolve) => setImmediate(resolve));
      this.woken = false;
      let free = concurrency - this.active.size;
      let claimed = 0;
      try {
        if (free > 0 && (this.active.size === 0 || free >= minFreeToClaim)) {
          const items = await this.spec.claim(free);
          claimed = items.length;
          for (const item of items) this.launch(item);
        } else free = 0;
        await this.spec.afterRound?.();
      } catch (e) {
        this.log.error({ err: e }, `${this.spec.name}: claim failed`);
      }
      this.rounds++;
      if (!this.running) break;
      const mayBeMore = free > 0 && claimed === free;
      if (mayBeMore && this.active.size < concurrency) continue;
      // Woken during the round (a task created while the claim ran): look again now, not after pollMs.
      if (this.woken && this.active.size < concurrency) continue;
      // Full: a finishing item wakes the loop. Idle: look again after pollMs or when woken.
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, this.active.size >= concurrency || (mayBeMore && this.active.size > 0) ? 60_000 : pollMs);
        this.wakeUp = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wakeUp = null;
    }
  }

  private launch(item: T): void {
    const p = this.spec
      .run(item)
      .catch((e) => this.log.error({ err: e }, `${this.spec.name}: item failed`))
      .finally(() => {
        this.active.delete(p);
        this.wake();
      });
    this.active.add(p);
  }
}
