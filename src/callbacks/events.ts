import type { Clock } from '../clock.js';
import { randomId } from '../ids.js';
import type { Mailer } from '../members/index.js';
import type { NetGuard } from '../net/index.js';
import type { SecretBox } from '../secrets/index.js';
import { WorkLoop, type AccountEventsTable, type Database } from '../store/index.js';
import type { EngineLog } from '../engine/index.js';
import { attemptDelivery, type Attempt } from './deliver.js';
import { claimDue, settle } from './lease.js';
import { KEY_COLUMNS, logAttempt, signingKeys } from './log.js';
import type { SigningKeys } from './signing.js';

/** What the event worker uses (a part of the callback worker's deps). */
export interface EventDeps {
  database: Database;
  clock: Clock;
  guard: NetGuard;
  secrets: SecretBox;
  settings: { retryDelaysMs: readonly number[]; timeoutMs: number; concurrency: number; pollMs: number };
  mailer?: Mailer | null;
}

interface ClaimedEvent {
  e: AccountEventsTable;
  keys: SigningKeys;
}

/** The webhook id of an account event: stable across its retries. */
export function eventWebhookId(eventId: string): string {
  return `msg_${eventId}`;
}

/**
 * Delivers account events (the `balance.low` alert, decision 1905) from their outbox: the row is
 * written in the transaction of the ledger change that crossed the level; this worker claims due
 * rows with a lease (FOR UPDATE SKIP LOCKED on PostgreSQL), so a crash mid-delivery is retried when
 * the lease runs out and several processes share the work. Webhooks are signed and retried like
 * task callbacks (CALLBACK_RETRY_DELAYS_MS) and logged in the delivery log; emails go to the
 * account's owners through SMTP_URL.
 */
export class EventWorker {
  readonly workerId = randomId('ev_', 9);
  private readonly work: WorkLoop<ClaimedEvent>;

  constructor(private readonly deps: EventDeps) {
    this.work = new WorkLoop<ClaimedEvent>({
      name: 'account events',
      concurrency: Math.max(1, Math.ceil(deps.settings.concurrency / 4)),
      pollMs: deps.settings.pollMs,
      claim: (n) => this.claim(n),
      run: (c) => this.deliver(c).catch((err) => this.work.log.error({ err, eventId: c.e.id }, 'account events: delivery bookkeeping failed')),
    });
  }

  start(log?: EngineLog): void {
    this.work.start(log);
  }

  async stop(graceMs?: number): Promise<void> {
    await this.work.stop(graceMs);
  }

  /** One round without the loop; returns how many were attempted. */
  async tick(): Promise<number> {
    const claimed = await this.claim(this.deps.settings.concurrency);
    await Promise.all(claimed.map((c) => this.deliver(c)));
    return claimed.length;
  }

  private async claim(n: number): Promise<ClaimedEvent[]> {
    const { database, clock, settings } = this.deps;
    const now = clock.now();
    return database.tx(async (trx) => {
      const rows = await claimDue(trx, 'account_events', n, { dialect: database.dialect, workerId: this.workerId, timeoutMs: settings.timeoutMs, now });
      if (rows.length === 0) return [];
      const accounts = await trx
        .selectFrom('accounts')
        .select(['accounts.id', ...KEY_COLUMNS])
        .where(
          'accounts.id',
          'in',
          rows.map((r) => r.account_id),
        )
        .execute();
      const byId = new Map(accounts.map((a) => [a.id, a]));
      return rows.map((e) => ({ e, keys: signingKeys(this.deps.secrets, byId.get(e.account_id)!, now) }));
    });
  }

  private async deliver({ e, keys }: ClaimedEvent): Promise<void> {
    const { clock, guard, settings } = this.deps;
    const started = clock.now();
    let attempt: Attempt;
    if (e.channel === 'webhook') {
      const delivery = { url: e.url!, keys, webhookId: eventWebhookId(e.id), subject: e.id, body: e.body, at: new Date(started) };
      attempt = await attemptDelivery(guard, delivery, settings.timeoutMs);
    } else attempt = await this.mail(e);
    // An email without SMTP_URL is given up at once: a retry could not go otherwise.
    const retries = e.channel === 'webhook' || Boolean(this.deps.mailer);
    const { outcome, attempts, patch } = settle(e, attempt, clock.now(), settings.retryDelaysMs, retries);
    await this.deps.database.tx(async (w) => {
      const done = await w.updateTable('account_events').set(patch).where('id', '=', e.id).where('locked_by', '=', this.workerId).executeTakeFirst();
      if (e.channel === 'webhook' && Number(done.numUpdatedRows) > 0) {
        const subject = { accountId: e.account_id, taskId: null, eventId: e.id, kind: 'event' as const, url: e.url!, webhookId: eventWebhookId(e.id) };
        await logAttempt(w, subject, attempt, started);
      }
    });
    if (outcome === 'failed') this.work.log.warn({ eventId: e.id, attempts, error: attempt.error }, 'account events: delivery given up');
  }

  /** Emails the event to the account's owners. */
  private async mail(e: AccountEventsTable): Promise<Attempt> {
    const started = performance.now();
    const took = () => Math.round(performance.now() - started);
    const { mailer, database } = this.deps;
    if (!mailer) return { ok: false, statusCode: null, error: 'SMTP_URL is not set: no email can be sent', durationMs: 0 };
    const owners = await database.db.selectFrom('members').select('email').where('account_id', '=', e.account_id).where('role', '=', 'owner').execute();
    if (owners.length === 0) return { ok: true, statusCode: null, error: 'the account has no owner to email', durationMs: took() };
    const body = JSON.parse(e.body) as { accountId: string; balance: string; level: string; at: string };
    const text =
      `The balance of GenGate account ${body.accountId} fell to ${body.balance} USD, below the alert level of ${body.level} USD (${body.at}).\n\n` +
      'Top up to keep creating tasks. This alert is sent once; it is sent again after the balance has been back at or above the level.\n';
    try {
      for (const o of owners) await mailer.send({ to: o.email, subject: `GenGate: balance below ${body.level} USD`, text });
      return { ok: true, statusCode: null, error: null, durationMs: took() };
    } catch (err) {
      return { ok: false, statusCode: null, error: `mail failed: ${(err as Error).message}`.slice(0, 500), durationMs: took() };
    }
  }
}
