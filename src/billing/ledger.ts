import { sql, type Kysely } from 'kysely';
import type { DB, KeyBudgetPeriod, LedgerKind, LedgerSource } from '../store/index.js';
import type { Clock } from '../clock.js';
import { insertRow, prepared } from '../store/index.js';
import { afterFall, afterRise, BALANCE_COLUMNS, type BalanceRow } from './alerts.js';
import { keepKeySpend, moveKeySpend, readKeySpend } from './key-spend.js';

/** Takes money if the balance covers it; the condition keeps a balance from going below zero. */
const takeStatement = prepared(2, (db: Kysely<DB>, accountId, amount) =>
  db
    .updateTable('accounts')
    .set({ balance_micros: sql`balance_micros - ${amount}` })
    .where('id', '=', accountId)
    .where('balance_micros', '>=', amount as unknown as number)
    .returning(BALANCE_COLUMNS),
);
const moveStatement = prepared(2, (db: Kysely<DB>, accountId, delta) =>
  db
    .updateTable('accounts')
    .set({ balance_micros: sql`balance_micros + ${delta}` })
    .where('id', '=', accountId)
    .returning(BALANCE_COLUMNS),
);
export type ChargeResult = { ok: true; balanceAfter: number } | { ok: false; balance: number; required: number };

/** A successful take: the balance after it, and whether the account keeps its keys' spend counters. */
type Taken = { ok: true; balanceAfter: number; keySpendKept: boolean };

export type RefundResult = { refunded: true; amount: number; balanceAfter: number } | { refunded: false; amount: 0 };

export interface LedgerEntry {
  id: number;
  accountId: string;
  kind: LedgerKind;
  amountMicros: number;
  balanceAfterMicros: number;
  taskId: string | null;
  /** The key that made the task's charge (on the charge and its refunds). */
  keyId: string | null;
  reason: string;
  createdAt: number;
}

/**
 * The append-only ledger. Every method takes the caller's transaction, so a charge commits
 * together with whatever it pays for. The cached `accounts.balance_micros` moves in the same
 * statement order everywhere: a conditional UPDATE (which never lets the balance go below zero
 * and serialises concurrent writers on the account row), then the entry. The same UPDATE returns
 * the account's low-balance alert state, so the crossing of the level fires (a fall) or re-arms
 * (a rise) in the transaction of the change, under its row lock (decision 1905, `alerts.ts`), and
 * whether the account keeps its keys' spend counters, which a charge or refund then moves in the
 * same transaction (decision 1902, `key-spend.ts`).
 */
export class Ledger {
  constructor(private readonly clock: Clock) {}

  /**
   * Takes `amount` from the account if the balance covers it; otherwise reports balance and required.
   * `keyId`: the key that asked (its spend); `model`: the task's model (usage per model, decision 1906).
   */
  async charge(
    trx: Kysely<DB>,
    accountId: string,
    amount: number,
    taskId: string | null,
    reason: string,
    keyId: string | null = null,
    model: string | null = null,
  ): Promise<ChargeResult> {
    const taken = await this.take(trx, accountId, amount);
    if (!taken.ok) return taken;
    const now = this.clock.now();
    await this.append(trx, accountId, 'charge', -amount, taken.balanceAfter, taskId, reason, keyId, now, null, model);
    if (keyId !== null && taken.keySpendKept) await moveKeySpend(trx, keyId, now, amount);
    return { ok: true, balanceAfter: taken.balanceAfter };
  }

  /**
   * What the key has spent (micro-USD) in the `period` holding `at`: its charges made in that
   * period less their refunds, whenever they came (a refund gives the budget back to the period
   * of its charge). Exact for a key of an account that keeps its keys' spend (`keepKeySpend`; every
   * key with a budget); read inside the caller's transaction after the lock that serialises the
   * key's creates, exact at that moment (decision 1902).
   */
  async keySpend(db: Kysely<DB>, keyId: string, period: KeyBudgetPeriod, at: number): Promise<number> {
    return readKeySpend(db, keyId, period, at);
  }

  /**
   * Makes the account keep its keys' spend counters from now on (the first time, filled from the
   * ledger), inside the caller's transaction: before a key of the account gets a budget, or before
   * its keys' spend is shown. An account nobody asks that of writes no counters (decision 1902).
   */
  async keepKeySpend(trx: Kysely<DB>, accountId: string): Promise<void> {
    await keepKeySpend(trx, accountId);
  }

  /** Adds money: a top-up, or a positive adjustment. `source`: `card` for a card top-up (the money report tells them apart). */
  async credit(
    trx: Kysely<DB>,
    accountId: string,
    amount: number,
    kind: 'topup' | 'adjustment',
    reason: string,
    source: LedgerSource | null = null,
  ): Promise<number> {
    assertAmount(amount);
    const { balanceAfter } = await this.move(trx, accountId, amount);
    await this.append(trx, accountId, kind, amount, balanceAfter, null, reason, null, this.clock.now(), source);
    return balanceAfter;
  }

  /** Removes money as an adjustment; refuses rather than go below zero (operator debits of the people-and-money issue use it). */
  async debitAdjustment(trx: Kysely<DB>, accountId: string, amount: number, reason: string, source: LedgerSource | null = null): Promise<ChargeResult> {
    const taken = await this.take(trx, accountId, amount);
    if (!taken.ok) return taken;
    await this.append(trx, accountId, 'adjustment', -amount, taken.balanceAfter, null, reason, null, this.clock.now(), source);
    return { ok: true, balanceAfter: taken.balanceAfter };
  }

  /**
   * Removes as much of `amount` as the balance holds, as an adjustment (a card payment taken back
   * by a refund or dispute): never below zero. Returns what was taken; the rest is the caller's
   * unpaid remainder. The balance is read under the account's row lock (a zero move), so a
   * concurrent credit that commits first is seen and taken too (PostgreSQL; SQLite has one writer);
   * the loop stays as a guard.
   */
  async debitUpTo(
    trx: Kysely<DB>,
    accountId: string,
    amount: number,
    reason: string,
    source: LedgerSource | null = null,
  ): Promise<{ taken: number; balanceAfter: number }> {
    assertAmount(amount);
    for (;;) {
      const { balanceAfter: balance } = await this.move(trx, accountId, 0);
      const want = Math.min(amount, balance);
      if (want === 0) return { taken: 0, balanceAfter: balance };
      const result = await this.debitAdjustment(trx, accountId, want, reason, source);
      if (result.ok) return { taken: want, balanceAfter: result.balanceAfter };
    }
  }

  /**
   * Returns money charged for a task, at most once per task and kind: `refund` returns what is
   * left of the charge (the whole of it unless a partial refund came first); `partial_refund`
   * returns `amount`. A second call of the same kind for the task does nothing.
   */
  async refund(trx: Kysely<DB>, taskId: string, kind: 'refund' | 'partial_refund', reason: string, amount?: number): Promise<RefundResult> {
    const entries = await trx
      .selectFrom('ledger_entries')
      .select(['kind', 'amount_micros', 'account_id', 'key_id', 'model', 'created_at'])
      .where('task_id', '=', taskId)
      .execute();
    const charge = entries.find((e) => e.kind === 'charge');
    if (!charge) return { refunded: false, amount: 0 };
    const charged = -Number(charge.amount_micros);
    const returned = entries.filter((e) => e.kind !== 'charge').reduce((s, e) => s + Number(e.amount_micros), 0);
    const value = kind === 'refund' ? charged - returned : Math.min(amount ?? 0, charged - returned);
    if (value < 0 || (kind === 'partial_refund' && value === 0)) return { refunded: false, amount: 0 };
    // Insert first: the unique (task_id, kind) index makes a concurrent second refund a no-op.
    const inserted = await trx
      .insertInto('ledger_entries')
      .values({
        account_id: charge.account_id,
        kind,
        amount_micros: value,
        balance_after_micros: 0,
        task_id: taskId,
        key_id: charge.key_id,
        model: charge.model,
        reason,
        created_at: this.clock.now(),
      })
      .onConflict((oc) => oc.columns(['task_id', 'kind']).doNothing())
      .returning('id')
      .executeTakeFirst();
    if (!inserted) return { refunded: false, amount: 0 };
    const { balanceAfter, keySpendKept } = await this.move(trx, charge.account_id, value);
    if (charge.key_id && keySpendKept) await moveKeySpend(trx, charge.key_id, Number(charge.created_at), -value);
    await trx.updateTable('ledger_entries').set({ balance_after_micros: balanceAfter }).where('id', '=', inserted.id).execute();
    return { refunded: true, amount: value, balanceAfter };
  }

  /** All entries of an account, oldest first. */
  async entries(db: Kysely<DB>, accountId: string): Promise<LedgerEntry[]> {
    const rows = await db.selectFrom('ledger_entries').selectAll().where('account_id', '=', accountId).orderBy('id').execute();
    return rows.map((r) => ({
      id: Number(r.id),
      accountId: r.account_id,
      kind: r.kind,
      amountMicros: Number(r.amount_micros),
      balanceAfterMicros: Number(r.balance_after_micros),
      taskId: r.task_id,
      keyId: r.key_id ?? null,
      reason: r.reason,
      createdAt: Number(r.created_at),
    }));
  }

  /** Takes `amount` if the balance covers it; on success also says whether the account keeps its keys' spend (read under the same row lock). */
  private async take(trx: Kysely<DB>, accountId: string, amount: number): Promise<Taken | Extract<ChargeResult, { ok: false }>> {
    assertAmount(amount);
    const [row] = (await takeStatement(trx, accountId, amount)).rows;
    if (row) {
      await afterFall(trx, accountId, row as BalanceRow, this.clock.now());
      return { ok: true, balanceAfter: Number(row.balance_micros), keySpendKept: Number(row.key_spend_kept) === 1 };
    }
    const current = await trx.selectFrom('accounts').select('balance_micros').where('id', '=', accountId).executeTakeFirst();
    if (!current) throw new Error(`no account ${accountId}`);
    return { ok: false, balance: Number(current.balance_micros), required: amount };
  }

  private async move(trx: Kysely<DB>, accountId: string, delta: number): Promise<{ balanceAfter: number; keySpendKept: boolean }> {
    const [row] = (await moveStatement(trx, accountId, delta)).rows;
    if (!row) throw new Error(`no account ${accountId}`);
    if (delta > 0) await afterRise(trx, accountId, row as BalanceRow);
    return { balanceAfter: Number(row.balance_micros), keySpendKept: Number(row.key_spend_kept) === 1 };
  }

  private async append(
    trx: Kysely<DB>,
    accountId: string,
    kind: LedgerKind,
    amount: number,
    balanceAfter: number,
    taskId: string | null,
    reason: string,
    keyId: string | null = null,
    now = this.clock.now(),
    source: LedgerSource | null = null,
    model: string | null = null,
  ) {
    await insertRow(trx, 'ledger_entries', {
      account_id: accountId,
      kind,
      amount_micros: amount,
      balance_after_micros: balanceAfter,
      task_id: taskId,
      key_id: keyId,
      reason,
      created_at: now,
      ...(source === null ? {} : { source }),
      ...(model === null ? {} : { model }),
    });
  }
}

function assertAmount(amount: number): void {
  if (!Number.isSafeInteger(amount) || amount < 0) throw new Error(`ledger amounts are non-negative integer micro-USD (got ${amount})`);
}
