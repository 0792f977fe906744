import type { Kysely } from 'kysely';
import type { Database, DB } from '../store/index.js';
import { Errors } from '../errors.js';
import { randomId } from '../ids.js';
import { formatUsd, parseUsd } from './money.js';

/**
 * What the ledger's balance statements return: the balance after the change, the account's alert
 * state (decision 1905) and whether it keeps its keys' spend counters (decision 1902).
 */
export interface BalanceRow {
  balance_micros: number;
  alert_level_micros: number | null;
  alert_armed: number;
  alert_url: string | null;
  alert_email: number;
  key_spend_kept: number;
}

/** The columns the balance statements return (the alert state and the key spend switch ride on the same row lock). */
export const BALANCE_COLUMNS = ['balance_micros', 'alert_level_micros', 'alert_armed', 'alert_url', 'alert_email', 'key_spend_kept'] as const;

/** The event type of a low-balance alert. */
export const BALANCE_LOW = 'balance.low';

/**
 * After money left the account (a charge or a debit), in the same transaction and under the
 * account's row lock: when the balance fell below an armed level, clears the arm and writes the
 * outbox rows of the alert (webhook and/or email), so the alert fires once per crossing whatever
 * the number of concurrent writers or processes.
 */
export async function afterFall(trx: Kysely<DB>, accountId: string, row: BalanceRow, now: number): Promise<void> {
  if (row.alert_level_micros === null || Number(row.alert_armed) !== 1) return;
  const balance = Number(row.balance_micros);
  const level = Number(row.alert_level_micros);
  if (balance >= level) return;
  const cleared = await trx.updateTable('accounts').set({ alert_armed: 0 }).where('id', '=', accountId).where('alert_armed', '=', 1).executeTakeFirst();
  if (Number(cleared.numUpdatedRows) === 0) return;
  const id = randomId('evt_', 12);
  const body = JSON.stringify({
    type: BALANCE_LOW,
    id,
    accountId,
    balance: formatUsd(balance, 4),
    level: formatUsd(level, 4),
    currency: 'USD',
    at: new Date(now).toISOString(),
  });
  const rows = [];
  const base = { account_id: accountId, type: BALANCE_LOW, body, status: 'pending' as const, attempts: 0, due_at: now, created_at: now };
  if (row.alert_url) rows.push({ ...base, id, channel: 'webhook' as const, url: row.alert_url });
  if (Number(row.alert_email) === 1) rows.push({ ...base, id: `${id}_mail`, channel: 'email' as const, url: null });
  if (rows.length > 0) await trx.insertInto('account_events').values(rows).execute();
}

/** After money came in (a top-up, an adjustment, a refund): a balance back at or above the level arms the alert again. */
export async function afterRise(trx: Kysely<DB>, accountId: string, row: BalanceRow): Promise<void> {
  if (row.alert_level_micros === null || Number(row.alert_armed) === 1) return;
  if (Number(row.balance_micros) < Number(row.alert_level_micros)) return;
  await trx.updateTable('accounts').set({ alert_armed: 1 }).where('id', '=', accountId).execute();
}

/** An account's low-balance alert as the API shows it. */
export interface AlertView {
  /** USD with 4 decimals, or null: no alert. */
  level: string | null;
  url: string | null;
  email: boolean;
  /** True while the balance is at or above the level: the next fall below it sends the alert. */
  armed: boolean;
}

/** A change of the alert settings; a missing field keeps its value. `level: null` turns the alert off. */
export interface AlertChange {
  level?: string | number | null;
  url?: string | null;
  email?: boolean;
}

/** Reads and sets the accounts' low-balance alerts (customer API, admin API, CLI). */
export class AlertSettings {
  constructor(private readonly database: Database) {}

  async get(accountId: string): Promise<AlertView> {
    const row = await this.database.db
      .selectFrom('accounts')
      .select(['alert_level_micros', 'alert_url', 'alert_email', 'alert_armed'])
      .where('id', '=', accountId)
      .executeTakeFirst();
    if (!row) throw Errors.notFound(`account ${accountId} not found`);
    return view(row);
  }

  /**
   * Sets the alert. The arm follows the balance at that moment: a level above the current balance
   * waits for the balance to reach it before it can fire. `checkUrl` refuses a URL the network
   * guard would refuse (400).
   */
  async set(accountId: string, change: AlertChange, checkUrl?: (url: string) => Promise<void>): Promise<AlertView> {
    let level: number | null | undefined;
    if (change.level === null) level = null;
    else if (change.level !== undefined) {
      level = parseUsd(change.level) ?? undefined;
      if (level === undefined || level <= 0)
        throw Errors.invalid(`level must be a positive USD amount such as "5" or "2.50", or null to turn the alert off (got ${JSON.stringify(change.level)})`);
    }
    if (change.url !== undefined && change.url !== null) {
      let parsed: URL | null = null;
      try {
        parsed = new URL(change.url);
      } catch {
        /* refused below */
      }
      if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') || change.url.length > 2000)
        throw Errors.invalid(`url must be an http(s) URL of at most 2000 characters, or null for no webhook (got ${JSON.stringify(change.url)})`);
      await checkUrl?.(change.url);
    }
    return this.database.tx(async (trx) => {
      const current = await trx.selectFrom('accounts').select(['balance_micros', 'alert_level_micros']).where('id', '=', accountId).executeTakeFirst();
      if (!current) throw Errors.notFound(`account ${accountId} not found`);
      const next = level === undefined ? (current.alert_level_micros === null ? null : Number(current.alert_level_micros)) : level;
      const armed = next !== null && Number(current.balance_micros) >= next ? 1 : 0;
      const patch: Record<string, unknown> = { alert_level_micros: next, alert_armed: armed };
      if (change.url !== undefined) patch.alert_url = change.url;
      if (change.email !== undefined) patch.alert_email = change.email ? 1 : 0;
      const row = await trx
        .updateTable('accounts')
        .set(patch)
        .where('id', '=', accountId)
        .returning(['alert_level_micros', 'alert_url', 'alert_email', 'alert_armed'])
        .executeTakeFirstOrThrow();
      return view(row);
    });
  }
}

function view(row: { alert_level_micros: number | null; alert_url: string | null; alert_email: number; alert_armed: number }): AlertView {
  return {
    level: row.alert_level_micros === null ? null : formatUsd(Number(row.alert_level_micros), 4),
    url: row.alert_url,
    email: Number(row.alert_email) === 1,
    armed: Number(row.alert_armed) === 1,
  };
}
