import { GenGateError, TaskFailedError, TimeoutError } from './errors.js';
import { upload, type UploadOptions, type UploadSource } from './files.js';
import { request, sleep, type Transport } from './http.js';
import type { InputOf, ModelName } from './models.js';
import { microsOf, runResult } from './results.js';
import type {
  Balance,
  CancelResult,
  CreatedTask,
  CreateOptions,
  ListQuery,
  ModelInfo,
  Price,
  PriceQuery,
  RunOptions,
  RunResult,
  Task,
  TaskPage,
  UploadedFile,
  WaitOptions,
} from './types.js';

export interface GenGateOptions {
  /** An API key (`gg_...`). */
  apiKey?: string;
  /** The server's address, e.g. `http://127.0.0.1:8080` (a trailing `/api/v1` is fine too). */
  baseUrl: string;
  /** The price host (PRICING_BASE_URL) when the operator moved it; default baseUrl. */
  pricingBaseUrl?: string;
  /** Retries of a call answered 429 (after its Retry-After), 5xx or not at all; default 3. */
  maxRetries?: number;
  /** First pause between looks at a running task, in ms (default 1000); it grows to pollMaxMs. */
  pollIntervalMs?: number;
  /** Longest pause between looks, in ms (default 10000). */
  pollMaxMs?: number;
  /** Another fetch (a proxy agent, a test double); default globalThis.fetch. */
  fetch?: typeof fetch;
}

/** The server's 20-minute task deadline: a task is final by then. */
const DEFAULT_TIMEOUT_MS = 21 * 60_000;

const final = (t: Task) => t.state === 'success' || t.state === 'fail';

function newIdempotencyKey(): string {
  return `sdk-${crypto.randomUUID()}`;
}

/** A page iterator that is also an iterator over the tasks of every page. */
export interface TaskList extends AsyncIterable<Task> {
  /** The pages themselves, one request each. */
  pages(): AsyncIterable<TaskPage>;
}

/**
 * A client of one GenGate server.
 *
 * ```ts
 * const gg = new GenGate({ apiKey: process.env.GENGATE_KEY, baseUrl: 'http://127.0.0.1:8080' });
 * const { files, costUsd } = await gg.run('nano-banana-2', { prompt: 'a lighthouse at dusk' });
 * ```
 */
export class GenGate {
  readonly transport: Transport;
  private readonly pollMs: number;
  private readonly pollMaxMs: number;

  constructor(o: GenGateOptions) {
    const base = o.baseUrl.replace(/\/+$/, '').replace(/\/api\/v1$/, '');
    this.transport = {
      apiKey: o.apiKey,
      baseUrl: base,
      pricingBaseUrl: (o.pricingBaseUrl ?? base).replace(/\/+$/, ''),
      maxRetries: o.maxRetries ?? 3,
      fetch: o.fetch ?? ((...args) => globalThis.fetch(...args)),
    };
    this.pollMs = o.pollIntervalMs ?? 1000;
    this.pollMaxMs = o.pollMaxMs ?? 10_000;
  }

  /**
   * Creates a task, waits until it is final and returns its files and cost; a failed task throws
   * TaskFailedError (its price is refunded). The create carries an Idempotency-Key, so a retry after a
   * lost answer returns the same task and charges nothing again.
   */
  async run<M extends ModelName | (string & {})>(model: M, input: InputOf<M>, o: RunOptions = {}): Promise<RunResult> {
    const started = Date.now();
    const created = await this.tasks.create(model, input, { callBackUrl: o.callBackUrl, idempotencyKey: o.idempotencyKey, signal: o.signal });
    const timeoutMs = o.timeoutMs === undefined ? undefined : Math.max(0, o.timeoutMs - (Date.now() - started));
    const task = await this.tasks.wait(created.taskId, { onProgress: o.onProgress, signal: o.signal, timeoutMs });
    return runResult(task);
  }

  readonly tasks = {
    /** POST /jobs/createTask. */
    create: async <M extends ModelName | (string & {})>(model: M, input: InputOf<M>, o: CreateOptions = {}): Promise<CreatedTask> => {
      const body: Record<string, unknown> = { model, input };
      if (o.callBackUrl !== undefined) body.callBackUrl = o.callBackUrl;
      const r = await request<{ taskId: string; status: string }>(this.transport, '/api/v1/jobs/createTask', {
        method: 'POST',
        json: body,
        headers: { 'idempotency-key': o.idempotencyKey ?? newIdempotencyKey() },
        signal: o.signal,
      });
      return { taskId: r.data.taskId, status: r.data.status, replayed: r.headers.get('idempotent-replayed') === 'true' };
    },
    /** GET /jobs/recordInfo. */
    get: async (taskId: string, o: { signal?: AbortSignal } = {}): Promise<Task> =>
      (await request<Task>(this.transport, '/api/v1/jobs/recordInfo', { query: { taskId }, signal: o.signal })).data,
    /** One page of GET /jobs/list. */
    page: async (q: ListQuery = {}, o: { signal?: AbortSignal } = {}): Promise<TaskPage> =>
      (await request<TaskPage>(this.transport, '/api/v1/jobs/list', { query: { ...q }, signal: o.signal })).data,
    /** The account's tasks, newest first, page after page: `for await (const task of gg.tasks.list({ state: 'success' }))`. */
    list: (q: ListQuery = {}, o: { signal?: AbortSignal } = {}): TaskList => {
      const pages = async function* (this: GenGate): AsyncGenerator<TaskPage> {
        let before = q.before;
        for (;;) {
          const page = await this.tasks.page({ ...q, before }, o);
          yield page;
          if (page.nextBefore === null || page.items.length === 0) return;
          before = page.nextBefore;
        }
      }.bind(this);
      return {
        pages,
        async *[Symbol.asyncIterator]() {
          for await (const page of pages()) yield* page.items;
        },
      };
    },
    /** POST /jobs/cancel: a waiting task always; a running one when its backend confirms (else TaskNotCancellableError). */
    cancel: async (taskId: string, o: { signal?: AbortSignal } = {}): Promise<CancelResult> =>
      (await request<CancelResult>(this.transport, '/api/v1/jobs/cancel', { method: 'POST', json: { taskId }, signal: o.signal })).data,
    /** Looks at the task with growing pauses until it is final; returns it on success, throws TaskFailedError on fail. */
    wait: async (taskId: string, o: WaitOptions = {}): Promise<Task> => {
      const deadline = Date.now() + (o.timeoutMs ?? DEFAULT_TIMEOUT_MS);
      let pause = this.pollMs;
      for (;;) {
        const task = await this.tasks.get(taskId, { signal: o.signal });
        if (task.state === 'fail') throw new TaskFailedError(task.taskId, task.failCode, task.failMsg, task);
        if (final(task)) return task;
        o.onProgress?.(task);
        const left = deadline - Date.now();
        if (left <= 0)
          throw new TimeoutError('timeout', 0, `task ${taskId} is still ${task.state} after the timeout; it runs on (cancel it with tasks.cancel)`);
        await sleep(Math.min(pause, left), o.signal);
        pause = Math.min(this.pollMaxMs, Math.round(pause * 1.5));
      }
    },
  };

  readonly files = {
    /** POST /api/v1/files/upload: a path (Node), Blob/File, bytes or a stream; returns the link to use in an input. */
    upload: (source: UploadSource, o: UploadOptions = {}): Promise<UploadedFile> => upload(this.transport, source, o),
    /** Fetches a result or upload link (no key needed: the link is the secret). */
    download: async (url: string, o: { signal?: AbortSignal } = {}): Promise<Response> => {
      const res = await this.transport.fetch(url, { signal: o.signal });
      if (!res.ok) throw new GenGateError('download_failed', res.status, `GET ${url} answered ${res.status}`, res.headers.get('x-request-id'));
      return res;
    },
  };

  readonly prices = {
    /** GET /v1/pricing/calculate: the exact price createTask would charge. */
    calculate: async (q: PriceQuery, o: { signal?: AbortSignal } = {}): Promise<Price> =>
      (await request<Price>(this.transport, '/v1/pricing/calculate', { query: { ...q }, pricing: true, signal: o.signal })).data,
    /** GET /v1/pricing: the whole price list. */
    list: async (o: { signal?: AbortSignal } = {}): Promise<Record<string, unknown>> =>
      (await request<Record<string, unknown>>(this.transport, '/v1/pricing', { pricing: true, signal: o.signal })).data,
  };

  readonly models = {
    /** GET /api/v1/models: the catalog with input schemas, prices and media limits. */
    list: async (o: { signal?: AbortSignal } = {}): Promise<ModelInfo[]> =>
      (await request<ModelInfo[]>(this.transport, '/api/v1/models', { signal: o.signal })).data,
  };

  /** GET /user/balance, with the balance also in integer micro-USD. */
  async balance(o: { signal?: AbortSignal } = {}): Promise<Balance> {
    const r = await request<Omit<Balance, 'micros'>>(this.transport, '/api/v1/user/balance', { signal: o.signal });
    return { ...r.data, micros: microsOf(r.data.balance) };
  }
}
