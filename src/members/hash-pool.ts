import { Worker } from 'node:worker_threads';
import { Errors } from '../errors.js';

/**
 * Password hashing on its own small pool of worker threads (issue 39 finding 2; decision 2305).
 * Node's scrypt runs on libuv's four-thread pool, the one file reads and writes, DNS and zlib
 * wait on: 240 sign-ins within the limits held another tenant's download for 37 s. Here each
 * worker runs scryptSync on its own thread, so a hash never takes a libuv thread; at most `size`
 * run at once and at most `queue` wait, and a hash past that is refused at once with 429.
 */
export interface HashJob {
  password: string;
  salt: Buffer;
  keyBytes: number;
  N: number;
  r: number;
  p: number;
  maxmem: number;
}

export interface HashPoolOptions {
  /** Worker threads (PASSWORD_HASH_THREADS). */
  size: number;
  /** Hashes that may wait for a thread (PASSWORD_HASH_QUEUE); one more is refused with 429. */
  queue: number;
  /** Starts a worker (tests give one they can hold); the default runs WORKER_CODE. */
  spawn?: () => Worker;
}

/** Seconds a client refused by a full queue is asked to wait. */
export const HASH_RETRY_AFTER_SECONDS = 1;

/** The worker: one scryptSync at a time on its own thread, answered by id. Plain JS, so it runs the same from src/ and dist/. */
export const WORKER_CODE = `
const { parentPort } = require('node:worker_threads');
const { scryptSync } = require('node:crypto');
parentPort.on('message', (job) => {
  try {
    const key = scryptSync(job.password, job.salt, job.keyBytes, { N: job.N, r: job.r, p: job.p, maxmem: job.maxmem });
    parentPort.postMessage({ id: job.id, key });
  } catch (e) {
    parentPort.postMessage({ id: job.id, error: String(e && e.message || e) });
  }
});
`;

interface Pending {
  job: HashJob & { id: number };
  resolve: (key: Buffer) => void;
  reject: (e: Error) => void;
}

interface Slot {
  worker: Worker;
  busy: Pending | null;
}

/** A fixed number of hashing threads with a bounded queue; threads start with the first hash and never keep the process alive. */
export class HashPool {
  private readonly slots: Slot[] = [];
  private readonly waiting: Pending[] = [];
  private next = 0;

  constructor(private readonly opts: HashPoolOptions) {}

  /** Hashes running now. */
  get running(): number {
    return this.slots.filter((s) => s.busy).length;
  }

  /** Hashes waiting for a thread. */
  get queued(): number {
    return this.waiting.length;
  }

  /** The derived key of `job`; refused at once with 429 (rate_limited, Retry-After) when every thread is busy and the queue is full. */
  derive(job: HashJob): Promise<Buffer> {
    const idle = this.idleSlot();
    if (!idle && this.waiting.length >= this.opts.queue) {
      return Promise.reject(
        Errors.rateLimited(`too many sign-ins and password changes at once on this server; retry in ${HASH_RETRY_AFTER_SECONDS} s`, HASH_RETRY_AFTER_SECONDS),
      );
    }
    return new Promise<Buffer>((resolve, reject) => {
      const pending: Pending = { job: { ...job, id: this.next++ }, resolve, reject };
      if (idle) this.start(idle, pending);
      else this.waiting.push(pending);
    });
  }

  /** Stops the threads; a hash asked for later starts them again. Hashes in flight fail. */
  async close(): Promise<void> {
    const slots = this.slots.splice(0);
    for (const p of [...this.waiting.splice(0), ...slots.flatMap((s) => (s.busy ? [s.busy] : []))]) p.reject(new Error('the password hashing pool was closed'));
    await Promise.all(slots.map((s) => s.worker.terminate()));
  }

  private idleSlot(): Slot | undefined {
    const idle = this.slots.find((s) => !s.busy);
    if (idle || this.slots.length >= this.opts.size) return idle;
    return this.spawn();
  }

  private spawn(): Slot {
    const worker = this.opts.spawn?.() ?? new Worker(WORKER_CODE, { eval: true });
    worker.unref();
    const slot: Slot = { worker, busy: null };
    this.slots.push(slot);
    worker.on('message', (m: { id: number; key?: Uint8Array; error?: string }) => {
      const done = slot.busy;
      if (!done || done.job.id !== m.id) return;
      slot.busy = null;
      if (m.key) done.resolve(Buffer.from(m.key));
      else done.reject(new Error(`password hashing failed: ${m.error}`));
      const next = this.waiting.shift();
      if (next) this.start(slot, next);
    });
    // A thread that dies (out of memory) fails its hash; the next hash starts a new one.
    worker.on('error', (e) => this.drop(slot, e));
    worker.on('exit', () => this.drop(slot, new Error('the password hashing thread stopped')));
    return slot;
  }

  private start(slot: Slot, pending: Pending): void {
    slot.busy = pending;
    slot.worker.postMessage(pending.job);
  }

  private drop(slot: Slot, e: Error): void {
    const at = this.slots.indexOf(slot);
    if (at === -1) return;
    this.slots.splice(at, 1);
    slot.busy?.reject(e);
    slot.busy = null;
    const next = this.waiting.shift();
    if (next) {
      const idle = this.idleSlot();
      if (idle) this.start(idle, next);
      else this.waiting.unshift(next);
    }
  }
}

let current: HashPool | undefined;

/** The pool every password hash of this process goes through (set from the settings at start; tests set their own). */
export function useHashPool(pool: HashPool): void {
  current = pool;
}

/** The pool in use; one thread and a queue of 64 until the settings say otherwise. */
export function hashPool(): HashPool {
  current ??= new HashPool({ size: 1, queue: 64 });
  return current;
}
