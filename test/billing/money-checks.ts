import { expect } from 'vitest';
import type { TestServer } from '../helpers/server.js';
import { expectLedgerInvariant } from '../tasks/support.js';
import { moneyReport, readWindow, reportView, usageOf, usageView } from '../../src/billing/index.js';

/**
 * The spend counters (`key_spend`) of every key of an account that keeps them agree with the
 * ledger: the running total with all of the key's entries, each UTC day and month with the charges
 * made in it less their refunds, whenever those came; other accounts' keys have none (decision 1902).
 */
export async function expectSpendMatchesLedger(s: TestServer): Promise<void> {
  const { db } = s.services.database;
  const entries = await db
    .selectFrom('ledger_entries')
    .select(['task_id', 'kind', 'key_id', 'amount_micros', 'created_at'])
    .where('key_id', 'is not', null)
    .where('account_id', 'in', (eb) => eb.selectFrom('accounts').select('accounts.id').where('accounts.key_spend_kept', '=', 1))
    .execute();
  const chargedAt = new Map(entries.filter((e) => e.kind === 'charge').map((e) => [e.task_id, Number(e.created_at)]));
  const expected = new Map<string, number>();
  for (const e of entries) {
    const at = new Date(chargedAt.get(e.task_id)!);
    const day = Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate());
    const month = Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1);
    for (const k of [`${e.key_id} total 0`, `${e.key_id} day ${day}`, `${e.key_id} month ${month}`])
      expected.set(k, (expected.get(k) ?? 0) - Number(e.amount_micros));
  }
  const rows = await db.selectFrom('key_spend').selectAll().execute();
  const actual = new Map(rows.map((r) => [`${r.key_id} ${r.period} ${Number(r.starts_at)}`, Number(r.spent_micros)]));
  expect(actual).toEqual(expected);
  // Spend is kept for API keys only: a member's session spends without a key (docs/accounts.md, Usage).
  const keys = new Set((await db.selectFrom('api_keys').select('id').execute()).map((k) => k.id));
  for (const r of rows) expect(keys.has(r.key_id), `key_spend row of ${r.key_id}, which is not an API key`).toBe(true);
}

/**
 * Every task has exactly one charge, of its price, on its account, under its model; a failed task is
 * refunded in full (one `refund` entry, `refunded` set), a task that is not failed has no full
 * refund, and no task gets back more than it paid.
 */
export async function expectTasksMatchLedger(s: TestServer): Promise<void> {
  const { db } = s.services.database;
  const tasks = await db.selectFrom('tasks').select(['id', 'account_id', 'model', 'state', 'price_micros', 'refunded']).execute();
  const entries = await db
    .selectFrom('ledger_entries')
    .select(['task_id', 'account_id', 'kind', 'amount_micros', 'model'])
    .where('task_id', 'is not', null)
    .execute();
  const byTask = new Map<string, typeof entries>();
  for (const e of entries) byTask.set(e.task_id!, [...(byTask.get(e.task_id!) ?? []), e]);
  for (const t of tasks) {
    const mine = byTask.get(t.id) ?? [];
    const charges = mine.filter((e) => e.kind === 'charge');
    expect(charges, `the charge of ${t.id}`).toHaveLength(1);
    expect({ amount: -Number(charges[0]!.amount_micros), account: charges[0]!.account_id, model: charges[0]!.model }).toEqual({
      amount: Number(t.price_micros),
      account: t.account_id,
      model: t.model,
    });
    const full = mine.filter((e) => e.kind === 'refund');
    const back = mine.filter((e) => e.kind !== 'charge').reduce((sum, e) => sum + Number(e.amount_micros), 0);
    expect(back, `refunds of ${t.id}`).toBeLessThanOrEqual(Number(t.price_micros));
    if (t.state === 'fail') {
      expect(full, `the refund of failed task ${t.id}`).toHaveLength(1);
      expect(back).toBe(Number(t.price_micros));
      expect(Number(t.refunded)).toBe(1);
    } else expect(full, `a full refund of ${t.state} task ${t.id}`).toHaveLength(0);
  }
  expect(new Set(entries.map((e) => e.task_id)).size).toBeLessThanOrEqual(tasks.length);
}

/**
 * The money invariants of the brief: every balance is the sum of its entries and never negative;
 * key spend counters agree with the ledger; the money report (today included) reconciles with the
 * sum of the balances; every account's usage by day, model and key nets to its charges less
 * refunds. With `adminToken` the report and usage are read through the admin API (real HTTP),
 * else from the billing functions those endpoints call.
 */
export async function expectMoneyInvariant(s: TestServer, adminToken?: string): Promise<void> {
  await expectLedgerInvariant(s.services.database);
  await expectSpendMatchesLedger(s);
  await expectTasksMatchLedger(s);
  const { db } = s.services.database;
  const get = async (path: string) => {
    const r = await s.call('GET', path, { headers: { authorization: `Bearer ${adminToken}` } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body.data;
  };
  const window = readWindow({}, s.services.clock.now(), { defaultDays: 30, maxDays: 366 });
  const report = adminToken ? (await get('/admin/v1/report')).reconciliation : reportView(await moneyReport(db, window, 'day')).reconciliation;
  expect(report.reconciled, JSON.stringify(report)).toBe(true);
  const balances = (await db.selectFrom('accounts').select('balance_micros').execute()).reduce((t, a) => t + Number(a.balance_micros), 0);
  expect(Math.round(Number(report.balancesNow) * 1e6)).toBe(balances);
  expect(report.balancesAtEnd).toBe(report.closing);
  const accounts = await db.selectFrom('accounts').select('id').execute();
  for (const { id } of accounts) {
    const rows = await db.selectFrom('ledger_entries').select(['kind', 'amount_micros']).where('account_id', '=', id).execute();
    const spent = rows.filter((r) => ['charge', 'refund', 'partial_refund'].includes(r.kind)).reduce((t, r) => t - Number(r.amount_micros), 0);
    for (const group of ['day', 'model', 'key'] as const) {
      const u = adminToken ? await get(`/admin/v1/accounts/${id}/usage?group=${group}`) : usageView(await usageOf(db, id, window, group));
      expect(u.total.spentMicros, `usage by ${group} of ${id}`).toBe(spent);
      expect((u.rows as Array<{ spentMicros: number }>).reduce((t, r) => t + r.spentMicros, 0)).toBe(spent);
    }
  }
}
