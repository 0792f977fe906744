import type { Clock } from '../clock.js';
import { randomId } from '../ids.js';
import { WorkLoop, updateThen, updateWhere } from '../store/index.js';
import type { NetGuard } from '../net/index.js';
import type { Database } from '../store/index.js';
import type { Updateable } from 'kysely';
import type { CallbacksTable } from '../store/index.js';
import type { SecretBox } from '../secrets/index.js';
import type { EngineLog } from '../engine/index.js';
import { TASK_VIEW_COLUMNS, type TaskRow, type TaskSignals, type ViewOptions } from '../tasks/index.js';
import type { Mailer } from '../members/index.js';
import { attemptDelivery, callbackBody, webhookId, type Attempt } from './deliver.js';
import { EventWorker } from './events.js';
import { claimDue, settle } from './lease.js';
import { KEY_COLUMNS, attemptRow, signingKeys } from './log.js';
import type { SigningKeys } from './signing.js';
import { tracing } from '../tracing/index.js';

/** Settings of the delivery worker. */
export interface CallbackSettings {
  /** Waits before each retry; one more than their number is the number of attempts. */
  retryDelaysMs: readonly number[];
  timeoutMs: number;
  concurrency: number;
  pollMs: number;
}

/** Everything the worker uses. `count` is told the outcome of every attempt (metrics). */
export interface CallbackDeps {
  database: Database;
  clock: Clock;
  guard: NetGuard;
  view: ViewOptions;
  signals: TaskSignals;
  settings: CallbackSettings;
  /** Opens the sealed webhook secrets of the accounts. */
  secrets: SecretBox;
  count?: (outcome: 'delivered' | 'retry' | 'failed') => void;
  /** Sends the account events' emails (null: SMTP_URL not set, email events fail with that reason). */
  mailer?: Mailer | null;
}

/** A claimed delivery with what it needs: the task (null if gone) and the account's signing keys. */
interface Claimed {
  c: CallbacksTable;
  task: TaskRow | null;
  /** The creating request's traceparent (decision 2603). */
  traceParent: string | null;
  keys: SigningKeys;
  accountId: string | null;
}

/**
 * Delivers task callbacks durably (DECISIONS §14). The outbox row is made due by the same
 * transaction that finishes the task; this worker claims due rows with a lease like the
 * engine (FOR UPDATE SKIP LOCKED on PostgreSQL), so several processes share the work and a
 * delivery interrupted by a crash is retried when its lease runs out.
 */
export class CallbackWorker {
  readonly workerId = randomId('cb_', 9);
  private readonly work: WorkLoop<Claimed>;
  /** The account events (low-balance alerts): their own outbox, started and stopped with this worker. */
  readonly events: EventWorker;

  constructor(private readonly deps: CallbackDeps) {
    const { concurrency, pollMs } = deps.settings;
    this.work = new WorkLoop<Claimed>({
      name: 'callbacks',
      concurrency,
      pollMs,
      claim: (n) => this.claim(n),
      run: (c) => this.deliver(c).catch((e) => this.work.log.error({ err: e, taskId: c.c.task_id }, 'callbacks: delivery bookkeeping failed')),
      // Claim in batches: one round trip for many deliveries.
      minFreeToClaim: Math.ceil(concurrency / 4),
    });
    deps.signals.on('callbackDue', () => this.work.wake());
    this.events = new EventWorker(deps);
  }

  /** Starts the loops (idempotent). */
  start(log?: EngineLog): void {
    this.work.start(log);
    this.events.start(log);
  }

  /** Stops claiming and waits for the deliveries in flight (for at most `graceMs` when given; decision 2602). */
  async stop(graceMs?: number): Promise<void> {
    await Promise.all([this.work.stop(graceMs), this.events.stop(graceMs)]);
  }

  /** Deliveries running now. */
  get busy(): number {
    return this.work.busy;
  }

  /** One round without the loop: claims what is due (callbacks and account events) and delivers it; returns how many were attempted. */
  async tick(): Promise<number> {
    const claimed = await this.claim(this.deps.settings.concurrency);
    await Promise.all(claimed.map((c) => this.deliver(c)));
    return claimed.length + (await this.events.tick());
  }

  /**
   * Takes leases on up to `n` due deliveries, oldest due first, with their tasks and signing secrets:
   * two statements for the batch (one when nothing is due), in autocommit on PostgreSQL. The lease
   * is the update's alone; the read that follows needs no transaction with it (a finished task no
   * longer changes, a task gone reads as null), and a crash between the two leaves a lease that runs out.
   */
  private async claim(n: number): Promise<Claimed[]> {
    const { database, clock, settings } = this.deps;
    const now = clock.now();
    return database.tx(
      async (trx) => {
        const rows = await claimDue(trx, 'callbacks', n, { dialect: database.dialect, workerId: this.workerId, timeoutMs: settings.timeoutMs, now });
        if (rows.length === 0) return [];
        const tasks = await trx
          .selectFrom('tasks')
          .innerJoin('accounts', 'accounts.id', 'tasks.account_id')
          .select(TASK_VIEW_COLUMNS.map((col) => `tasks.${col}` as const))
          .select(KEY_COLUMNS)
          .select(['tasks.account_id', 'tasks.trace_parent'])
          .where(
            'tasks.id',
            'in',
            rows.map((r) => r.task_id),
          )
          .execute();
        const byId = new Map(tasks.map((t) => [t.id, t]));
        return rows.map((c) => {
          const t = byId.get(c.task_id);
          return {
            c,
            task: t ? ({ ...t, seq: Number(t.seq) } as unknown as TaskRow) : null,
            traceParent: t?.trace_parent ?? null,
            keys: t ? signingKeys(this.deps.secrets, t, now) : { secret: '', previous: null },
            accountId: t ? t.account_id : null,
          };
        });
      },
      { atomic: false },
    );
  }

  /** One attempt of one claimed delivery, in the creating request's trace (decision 2603; off, a direct call). */
  private deliver(claimed: Claimed): Promise<void> {
    return tracing.span('callback.deliver', { 'gengate.task_id': claimed.c.task_id }, () => this.attempt(claimed), tracing.contextOf(claimed.traceParent));
  }

  /** One attempt of one claimed delivery, then its outcome written back (only while this worker holds the lease). */
  private async attempt({ c, task, keys, accountId }: Claimed): Promise<void> {
    const { clock, guard, view, settings } = this.deps;
    let attempt: Attempt;
    const started = clock.now();
    if (!task) attempt = { ok: false, statusCode: null, error: 'the task no longer exists', durationMs: 0 };
    else {
      const { body } = callbackBody(task, c, view);
      const delivery = { url: c.url, keys, webhookId: webhookId(c.task_id), subject: c.task_id, body, at: new Date(started) };
      attempt = await attemptDelivery(guard, delivery, settings.timeoutMs);
    }
    // A task gone is given up at once: there is nothing to deliver.
    const { outcome, attempts, patch } = settle(c, attempt, clock.now(), settings.retryDelaysMs, task !== null);
    await this.write(
      c.task_id,
      patch,
      accountId ? { account: accountId, attempt, at: started, kind: attempts === 1 ? 'delivery' : 'retry', url: c.url } : null,
    );
    this.deps.count?.(outcome);
    if (outcome === 'failed') this.work.log.warn({ taskId: c.task_id, attempts, error: attempt.error }, 'callbacks: delivery given up');
  }

  /**
   * Writes one outcome and its line of the delivery log, only while this worker still holds the
   * lease (compare-and-set on `locked_by`): the log line only with the outcome. On PostgreSQL one
   * statement in autocommit (updateThen), one round trip; on SQLite two in one transaction.
   */
  private async write(
    taskId: string,
    patch: Updateable<CallbacksTable>,
    log: { account: string; attempt: Attempt; at: number; kind: 'delivery' | 'retry'; url: string } | null,
  ): Promise<void> {
    const { database } = this.deps;
    const held = { task_id: taskId, locked_by: this.workerId };
    if (!log) {
      await database.tx((w) => updateWhere(w, 'callbacks', patch, held), { atomic: false });
      return;
    }
    const subject = { accountId: log.account, taskId, eventId: null, kind: log.kind, url: log.url, webhookId: webhookId(taskId) };
    const line = attemptRow(subject, log.attempt, log.at);
    await database.tx((w) => updateThen(w, 'callbacks', patch, held, [{ insert: 'webhook_attempts', rows: [line] }]), {
      atomic: database.dialect !== 'postgres',
    });
  }
}
