import { EventEmitter } from 'node:events';
import type { Principal } from '../accounts/index.js';
import type { Ledger } from '../billing/index.js';
import { KIE_SUNO, withKieSuno, type Catalog } from '../catalog/index.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import { AppError, Errors } from '../errors.js';
import type { Files, MediaFactsResolver } from '../files/index.js';
import type { Database } from '../store/index.js';
import { readByKey } from '../store/index.js';
import type { CallbacksTable, TaskState } from '../store/index.js';
import { NO_CHECKS, createTask, type CreateDeps, type Created, type Via } from './create.js';
import { SUNO_ORIGIN, sunoCreateBody, sunoRefusal, sunoView } from './suno.js';
import { FinalViews, unchangedUntil } from './final-views.js';
import { cancelTask, type CancelDeps, type Cancelled } from './cancel.js';
import { Waiters } from './waiters.js';

const NO_ROUTES: Pick<CancelDeps, 'backendOf' | 'callTimeoutMs'> = { backendOf: async () => undefined, callTimeoutMs: 30_000 };
import { TASK_VIEW_COLUMNS, taskView, type TaskRow, type ViewOptions } from './view.js';

/**
 * In-process signals (engine/wakeups.ts carries them between processes): `created` wakes the engine,
 * `due` wakes it for a task made due now (an upstream's completion notice), `finished` (taskId)
 * tells waiters (MCP) a task is final, `callbackDue` wakes callback delivery for a finished task
 * that has a callBackUrl (the others would only cost the worker an empty claim).
 */
export class TaskSignals extends EventEmitter<{ created: [string]; due: [string]; finished: [string]; callbackDue: [string] }> {}

export interface ListQuery {
  limit: number;
  state?: TaskState;
  before?: number;
  /** Canonical model id. */
  model?: string;
  /** createTime bounds in ms: since inclusive, until exclusive. */
  since?: number;
  until?: number;
}

/** The task capability as routes see it: create, one task, the list. */
export class Tasks {
  private readonly findTask;
  private readonly findCallback;
  private readonly view: ViewOptions;
  private readonly finals = new FinalViews();
  /** The waits of this process for tasks to end (waitForTask). */
  readonly waiters: Waiters;

  constructor(
    private readonly database: Database,
    private readonly ledger: Ledger,
    private readonly catalog: Catalog,
    private readonly clock: Clock,
    private readonly facts: MediaFactsResolver,
    files: Files,
    private readonly config: Config,
    /** The process's task signals, made by the caller so that what is built before Tasks (a route's `due`) can hold them. */
    readonly signals: TaskSignals,
    /** createTask's checks: callBackUrl against the network guard, the content check. */
    private readonly checks: Pick<CreateDeps, 'checkUrl' | 'moderate'> = NO_CHECKS,
    /** The cancel's way to the routes' backends (none: a handed task cannot be cancelled). */
    private readonly routes: Pick<CancelDeps, 'backendOf' | 'callTimeoutMs'> = NO_ROUTES,
  ) {
    const { db } = database;
    // By id alone, so that the polls of many accounts share a query on PostgreSQL; the account is checked on the row.
    this.findTask = readByKey(
      database,
      'id',
      () => db.selectFrom('tasks').select([...TASK_VIEW_COLUMNS, 'account_id', 'files_expire_at']),
      (r) => r.id,
    );
    this.findCallback = readByKey(
      database,
      'task_id',
      () => db.selectFrom('callbacks').selectAll(),
      (r) => r.task_id,
    );
    this.waiters = new Waiters(database, signals, config.ENGINE_POLL_MS);
    this.view = { usdRubRate: config.USD_RUB_RATE, fileUrl: (id, name) => files.url(id, name) };
  }

  /** POST /jobs/createTask; see createTask. */
  async create(principal: Principal, body: unknown, idempotencyKey: string | undefined): Promise<Created> {
    // One immutable catalog for the whole create: a reload meanwhile never splits a request (decision 3305).
    return this.createWith(this.catalog.snapshot?.() ?? this.catalog, principal, body, idempotencyKey);
  }

  /**
   * kie.ai's POST /api/v1/generate (decision 0404): an ordinary suno-v6 task through the same
   * create path (price, charge, idempotency), its body mapped by src/catalog/kie-suno.ts, its
   * refusals worded in the client's names, remembered as created there (tasks.origin).
   */
  async createSuno(principal: Principal, sent: unknown, idempotencyKey: string | undefined): Promise<Created> {
    try {
      const catalog = withKieSuno(this.catalog.snapshot?.() ?? this.catalog);
      if (!catalog) throw Errors.unsupportedModel(`${KIE_SUNO.model} is not in this server's catalog`);
      return await this.createWith(catalog, principal, sunoCreateBody(sent), idempotencyKey, { origin: SUNO_ORIGIN, sent });
    } catch (e) {
      throw sunoRefusal(e);
    }
  }

  private async createWith(catalog: Catalog, principal: Principal, body: unknown, idempotencyKey: string | undefined, via?: Via): Promise<Created> {
    const created = await createTask(
      {
        database: this.database,
        ledger: this.ledger,
        catalog,
        clock: this.clock,
        facts: this.facts,
        publicBaseUrl: this.config.PUBLIC_BASE_URL,
        topUpUrl: this.config.TOPUP_URL,
        ...this.checks,
      },
      principal,
      body,
      idempotencyKey,
      via,
    );
    if (!created.replayed) this.signals.emit('created', created.taskId);
    return created;
  }

  /** POST /jobs/cancel; see cancelTask. */
  cancel(accountId: string, taskId: string): Promise<Cancelled> {
    const { database, ledger, catalog, clock, signals } = this;
    return cancelTask({ database, ledger, catalog, clock, signals, ...this.routes }, accountId, taskId);
  }

  /** One task of the account as the SPEC Task; 404 when it is not the account's. */
  async get(accountId: string, taskId: string): Promise<Record<string, unknown>> {
    return JSON.parse(await this.viewJson(accountId, taskId)) as Record<string, unknown>;
  }

  /** The same as JSON text (what recordInfo sends); a finished task that can no longer change comes from memory. */
  async viewJson(accountId: string, taskId: string): Promise<string> {
    const now = this.clock.now();
    const kept = this.finals.get(taskId, accountId, now);
    if (kept !== undefined) return kept;
    const [found] = await this.findTask(taskId);
    if (!found || found.account_id !== accountId) throw Errors.taskNotFound(taskId);
    const row = found as unknown as TaskRow & { files_expire_at: number | null };
    const callback = row.callback_url ? ((await this.findCallback(row.id))[0] ?? null) : null;
    const json = JSON.stringify(taskView(row, callback, this.view));
    this.finals.put(taskId, accountId, json, unchangedUntil(row, callback), now);
    return json;
  }

  /** `data` of kie.ai's GET /api/v1/generate/record-info: a suno-v6 task of the account in kie.ai's Suno shape; 404 otherwise. */
  async sunoInfo(accountId: string, taskId: string): Promise<ReturnType<typeof sunoView>> {
    const [found] = await this.findTask(taskId);
    if (!found || found.account_id !== accountId) throw Errors.taskNotFound(taskId);
    if (found.model !== KIE_SUNO.model) {
      throw new AppError(
        'task_not_found',
        `task ${taskId} is a ${found.model} task, not a ${KIE_SUNO.model} one; read it with GET /api/v1/jobs/recordInfo?taskId=${taskId}`,
      );
    }
    return sunoView(found as unknown as TaskRow, this.view);
  }

  /** Newest first, keyset-paged by the task sequence number, so equal timestamps never cause gaps or repeats. */
  async list(accountId: string, q: ListQuery) {
    let query = this.database.db.selectFrom('tasks').select(TASK_VIEW_COLUMNS).where('account_id', '=', accountId);
    if (q.state) query = query.where('state', '=', q.state);
    if (q.before !== undefined) query = query.where('seq', '<', q.before);
    if (q.model !== undefined) query = query.where('model', '=', q.model);
    if (q.since !== undefined) query = query.where('created_at', '>=', q.since);
    if (q.until !== undefined) query = query.where('created_at', '<', q.until);
    const rows = (await query
      .orderBy('seq', 'desc')
      .limit(q.limit + 1)
      .execute()) as TaskRow[];
    const page = rows.slice(0, q.limit);
    const withCallback = page.filter((r) => r.callback_url).map((r) => r.id);
    const callbacks = withCallback.length > 0 ? await this.callbacks(withCallback) : new Map<string, CallbacksTable>();
    return {
      items: page.map((r) => taskView(r, callbacks.get(r.id) ?? null, this.view)),
      nextBefore: rows.length > q.limit ? Number(page[page.length - 1]!.seq) : null,
    };
  }

  private async callbacks(taskIds: string[]): Promise<Map<string, CallbacksTable>> {
    const rows = await this.database.db.selectFrom('callbacks').selectAll().where('task_id', 'in', taskIds).execute();
    return new Map(rows.map((r) => [r.task_id, r]));
  }
}
