import { Errors, shown } from '../errors.js';
import { randomId } from '../ids.js';
import { NetError } from '../net/index.js';
import { callbackView, TASK_VIEW_COLUMNS, type TaskRow } from '../tasks/index.js';
import type { CallbackDeps } from './worker.js';
import { attemptDelivery, callbackBody, webhookId, type Attempt } from './deliver.js';
import { attemptView, KEY_COLUMNS, logAttempt, signingKeys, type AttemptView } from './log.js';

/** A redelivery asked for again within this long answers the one already made (double clicks, client retries). */
export const REDELIVER_REPEAT_MS = 10_000;

/** The delivery log of a task: its callback's state and every attempt, oldest first. */
export interface DeliveryLog {
  taskId: string;
  callback: ReturnType<typeof callbackView> | null;
  attempts: AttemptView[];
}

/**
 * What a customer does with deliveries by hand (decision 1905): read a task's delivery log,
 * redeliver its callback now, send a test delivery. Each attempt is written to the log.
 */
export class Webhooks {
  constructor(private readonly deps: Omit<CallbackDeps, 'signals'>) {}

  /** The delivery log of one task of the account (404 for a task of another account). */
  async log(accountId: string, taskId: string): Promise<DeliveryLog> {
    const { db } = this.deps.database;
    const task = await db.selectFrom('tasks').select('id').where('id', '=', taskId).where('account_id', '=', accountId).executeTakeFirst();
    if (!task) throw Errors.taskNotFound(taskId);
    const [callback, attempts] = await Promise.all([
      db.selectFrom('callbacks').selectAll().where('task_id', '=', taskId).executeTakeFirst(),
      db.selectFrom('webhook_attempts').selectAll().where('task_id', '=', taskId).orderBy('at').orderBy('id').execute(),
    ]);
    return { taskId, callback: callback ? callbackView(callback) : null, attempts: attempts.map(attemptView) };
  }

  /**
   * Sends the task's callback once more, now, and logs the attempt (`redeliver`). A success marks
   * the callback delivered; a failure leaves its state (pending retries go on). Refused (409) while a
   * delivery of the task is in flight, and for a task that is not finished or has no callBackUrl; a
   * repeat within REDELIVER_REPEAT_MS answers the attempt already made (`repeated: true`).
   */
  async redeliver(accountId: string, taskId: string): Promise<{ repeated: boolean; attempt: AttemptView; callback: ReturnType<typeof callbackView> }> {
    const { database, clock, guard, view, settings, secrets } = this.deps;
    const now = clock.now();
    const lock = randomId('rd_', 9);
    const claimed = await database.tx(async (trx) => {
      const task = await trx
        .selectFrom('tasks')
        .innerJoin('accounts', 'accounts.id', 'tasks.account_id')
        .select(TASK_VIEW_COLUMNS.map((col) => `tasks.${col}` as const))
        .select(KEY_COLUMNS)
        .where('tasks.id', '=', taskId)
        .where('tasks.account_id', '=', accountId)
        .executeTakeFirst();
      if (!task) throw Errors.taskNotFound(taskId);
      const recent = await trx
        .selectFrom('webhook_attempts')
        .selectAll()
        .where('task_id', '=', taskId)
        .where('kind', '=', 'redeliver')
        .where('at', '>', now - REDELIVER_REPEAT_MS)
        .orderBy('at', 'desc')
        .executeTakeFirst();
      const c = await trx.selectFrom('callbacks').selectAll().where('task_id', '=', taskId).executeTakeFirst();
      if (!c) throw Errors.conflict(`task ${shown(taskId)} has no callBackUrl: there is nothing to redeliver`);
      if (c.due_at === null) throw Errors.conflict(`task ${shown(taskId)} is not finished: its callback is sent when it reaches success or fail`);
      if (recent) return { repeated: recent, c };
      const taken = await trx
        .updateTable('callbacks')
        .set({ locked_until: now + settings.timeoutMs + 30_000, locked_by: lock })
        .where('task_id', '=', taskId)
        .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<=', now)]))
        .executeTakeFirst();
      if (Number(taken.numUpdatedRows) === 0)
        throw Errors.conflict(`a delivery of task ${shown(taskId)} is in progress; look at its delivery log in a few seconds`);
      return { repeated: null, c, task: { ...task, seq: Number(task.seq) } as unknown as TaskRow, keys: signingKeys(secrets, task, now) };
    });
    if (claimed.repeated) return { repeated: true, attempt: attemptView(claimed.repeated), callback: callbackView(claimed.c) };
    const { c, task, keys } = claimed as Required<typeof claimed>;
    const { body } = callbackBody(task, c, view);
    const attempt = await attemptDelivery(
      guard,
      { url: c.url, keys, webhookId: webhookId(taskId), subject: taskId, body, at: new Date(now) },
      settings.timeoutMs,
    );
    const done = clock.now();
    let logged = '';
    const row = await database.tx(async (trx) => {
      const updated = await trx
        .updateTable('callbacks')
        .set({
          attempts: Number(c.attempts) + 1,
          last_attempt_at: done,
          last_status_code: attempt.statusCode,
          last_error: attempt.error,
          ...(attempt.ok ? { status: 'delivered' as const, delivered_at: done } : {}),
          locked_until: null,
          locked_by: null,
        })
        .where('task_id', '=', taskId)
        .where('locked_by', '=', lock)
        .returningAll()
        .executeTakeFirst();
      logged = await logAttempt(trx, { accountId, taskId, eventId: null, kind: 'redeliver', url: c.url, webhookId: webhookId(taskId) }, attempt, now);
      return updated ?? (await trx.selectFrom('callbacks').selectAll().where('task_id', '=', taskId).executeTakeFirstOrThrow());
    });
    return { repeated: false, attempt: viewOf(logged, attempt, 'redeliver', c.url, webhookId(taskId), now), callback: callbackView(row) };
  }

  /** Sends a signed `webhook.test` event to `url` now and logs it (kind `test`); answers what the receiver did. */
  async sendTest(accountId: string, url: string): Promise<AttemptView & { body: unknown }> {
    const { database, clock, guard, settings, secrets } = this.deps;
    let parsed: URL | null = null;
    try {
      parsed = new URL(url);
    } catch {
      /* refused below */
    }
    if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:'))
      throw Errors.invalid(`url must be an http(s) URL (got ${JSON.stringify(url).slice(0, 200)})`);
    try {
      await guard.check(url);
    } catch (e) {
      if (e instanceof NetError) throw Errors.invalid(`url must reach a public address: ${e.message} (got ${JSON.stringify(url).slice(0, 200)})`);
      throw e;
    }
    const now = clock.now();
    const account = await database.db
      .selectFrom('accounts')
      .select(['accounts.id', ...KEY_COLUMNS])
      .where('accounts.id', '=', accountId)
      .executeTakeFirst();
    if (!account) throw Errors.notFound(`account ${accountId} not found`);
    const id = randomId('evt_', 12);
    const payload = { type: 'webhook.test', id, accountId, at: new Date(now).toISOString() };
    const body = JSON.stringify(payload);
    const hook = `msg_${id}`;
    const attempt = await attemptDelivery(
      guard,
      { url, keys: signingKeys(secrets, account, now), webhookId: hook, subject: id, body, at: new Date(now) },
      settings.timeoutMs,
    );
    const logged = await database.tx((trx) => logAttempt(trx, { accountId, taskId: null, eventId: id, kind: 'test', url, webhookId: hook }, attempt, now));
    return { ...viewOf(logged, attempt, 'test', url, hook, now), body: payload };
  }
}

function viewOf(id: string, a: Attempt, kind: AttemptView['kind'], url: string, hook: string, at: number): AttemptView {
  return { id, kind, url, webhookId: hook, at, ok: a.ok, statusCode: a.statusCode, error: a.error, durationMs: a.durationMs };
}
