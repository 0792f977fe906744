import { Worker } from 'node:worker_threads';
import { ModerationBusy, ModerationUnavailable } from './types.js';

export interface PoolOptions {
  /** Worker threads, each with its own copy of the model. */
  workers: number;
  /** Content checks with photos one account may have running at once. */
  checksPerAccount: number;
  /** Photos waiting for a worker, all accounts together. */
  queueMax: number;
  /** TensorFlow.js backend in the workers: `wasm` (default, fast) or `cpu` (pure JavaScript, the baseline). */
  backend?: 'wasm' | 'cpu';
}

/** What the pool has done and holds, for tests and the Retry-After estimate. */
export interface PoolStats {
  /** Photos scored since start. */
  classified: number;
  queued: number;
  running: number;
  /** Checks and photos refused because the account's share or the queue was full. */
  busyRefusals: number;
  /** Recent time the model took per photo, in milliseconds (0 before the first). */
  photoMs: number;
}

interface Job {
  id: number;
  pixels: Uint8Array;
  resolve(score: number): void;
  reject(e: Error): void;
}

interface Slot {
  worker: Worker | null;
  job: Job | null;
}

type Reply = { id: number; score: number; ms: number } | { id: number; error: string };

const WORKER_URL = new URL('./classify-worker.mjs', import.meta.url);

/**
 * The image classifier off the API's event loop: a fixed set of worker threads, a bounded queue in
 * which the waiting accounts take turns (one photo each, round robin), and a cap on the checks one
 * account may run at once. Workers start on the first photo and load the model there, never on the
 * main thread; a worker that dies fails its photo and is started again for the next one.
 */
export class ClassifierPool {
  /** Waiting photos per account; the Map's order is the turn (the served account moves to the back). */
  private readonly queues = new Map<string, Job[]>();
  private readonly checks = new Map<string, number>();
  private readonly slots: Slot[];
  private queued = 0;
  private nextId = 1;
  private classified = 0;
  private busyRefusals = 0;
  private photoMs = 0;
  private closed = false;

  constructor(private readonly options: PoolOptions) {
    this.slots = Array.from({ length: options.workers }, () => ({ worker: null, job: null }));
  }

  /** Takes one of the account's check slots and returns its release; throws ModerationBusy when the account uses all of them. */
  admit(accountId: string): () => void {
    const running = this.checks.get(accountId) ?? 0;
    if (running >= this.options.checksPerAccount) {
      this.busyRefusals++;
      throw new ModerationBusy(
        `this account already has ${running} content checks with photos running (at most ${this.options.checksPerAccount} at once)`,
        this.retryAfter(),
      );
    }
    this.checks.set(accountId, running + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.checks.get(accountId) ?? 1) - 1;
      if (left > 0) this.checks.set(accountId, left);
      else this.checks.delete(accountId);
    };
  }

  /** Scores one photo (224x224 RGB pixels) in a worker; throws ModerationBusy when the queue is full. */
  score(pixels: Uint8Array, accountId: string): Promise<number> {
    if (this.closed) return Promise.reject(new ModerationUnavailable('the image classifier is shut down', false));
    if (this.queued >= this.options.queueMax) {
      this.busyRefusals++;
      return Promise.reject(new ModerationBusy(`the content check has ${this.queued} photos waiting (at most ${this.options.queueMax})`, this.retryAfter()));
    }
    return new Promise<number>((resolve, reject) => {
      const job = { id: this.nextId++, pixels, resolve, reject };
      const waiting = this.queues.get(accountId);
      if (waiting) waiting.push(job);
      else this.queues.set(accountId, [job]);
      this.queued++;
      this.dispatch();
    });
  }

  /** Counters and sizes right now. */
  stats(): PoolStats {
    const running = this.slots.filter((s) => s.job).length;
    return { classified: this.classified, queued: this.queued, running, busyRefusals: this.busyRefusals, photoMs: Math.round(this.photoMs) };
  }

  /** Fails the waiting photos and stops the workers. */
  async close(): Promise<void> {
    this.closed = true;
    const gone = new ModerationUnavailable('the image classifier is shut down', false);
    for (const jobs of this.queues.values()) for (const job of jobs) job.reject(gone);
    this.queues.clear();
    this.queued = 0;
    await Promise.all(
      this.slots.map(async (slot) => {
        const { worker, job } = slot;
        slot.worker = null;
        slot.job = null;
        job?.reject(gone);
        await worker?.terminate();
      }),
    );
  }

  private dispatch(): void {
    for (const slot of this.slots) {
      if (slot.job) continue;
      const job = this.next();
      if (!job) return;
      this.run(slot, job);
    }
  }

  /** The oldest photo of the account whose turn it is; that account then goes to the back. */
  private next(): Job | undefined {
    const first = this.queues.entries().next();
    if (first.done) return undefined;
    const [account, jobs] = first.value;
    const job = jobs.shift()!;
    this.queues.delete(account);
    if (jobs.length > 0) this.queues.set(account, jobs);
    this.queued--;
    return job;
  }

  private run(slot: Slot, job: Job): void {
    slot.worker ??= this.spawn(slot);
    slot.job = job;
    // A copy the worker owns (transferred, not cloned): the caller's buffer may be a view into a pool.
    const pixels = new Uint8Array(job.pixels);
    slot.worker.postMessage({ id: job.id, pixels }, [pixels.buffer]);
  }

  private spawn(slot: Slot): Worker {
    const worker = new Worker(WORKER_URL, { workerData: { backend: this.options.backend ?? 'wasm' } });
    // An idle pool must not keep a CLI command or a test process alive.
    worker.unref();
    worker.on('message', (reply: Reply) => {
      const job = slot.job;
      if (slot.worker !== worker || !job || job.id !== reply.id) return;
      slot.job = null;
      if ('error' in reply) {
        // The worker's message may name paths of this server: it stays in `cause`, out of the client's answer.
        job.reject(Object.assign(new ModerationUnavailable('the image classifier could not run', false), { cause: reply.error }));
      } else {
        this.classified++;
        this.photoMs = this.photoMs === 0 ? reply.ms : 0.8 * this.photoMs + 0.2 * reply.ms;
        job.resolve(reply.score);
      }
      this.dispatch();
    });
    worker.on('error', (e) => this.lost(slot, worker, e.message));
    worker.on('exit', (code) => this.lost(slot, worker, `the worker exited with code ${code}`));
    return worker;
  }

  /** A worker died: its photo fails, and the next photo starts a new worker. */
  private lost(slot: Slot, worker: Worker, why: string): void {
    if (slot.worker !== worker) return;
    slot.worker = null;
    const job = slot.job;
    slot.job = null;
    job?.reject(Object.assign(new ModerationUnavailable('the image classifier stopped', false), { cause: why }));
    void worker.terminate();
    if (!this.closed) this.dispatch();
  }

  /** Whole seconds until the queue ahead has likely been worked off (at least 1). */
  private retryAfter(): number {
    const perPhoto = this.photoMs || 1000;
    const ahead = this.queued + this.slots.length;
    return Math.max(1, Math.ceil((ahead * perPhoto) / this.slots.length / 1000));
  }
}
