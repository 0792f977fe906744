import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { dialects } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';

const run = promisify(execFile);
const worker = (args: string[]) =>
  run(process.execPath, ['--import', 'tsx', 'test/helpers/ledger-worker.ts', ...args], { cwd: process.cwd() }).then(
    (r) => JSON.parse(r.stdout) as { yes: number; no: number },
  );

async function invariant(s: TestServer, accountId: string) {
  const { db } = s.services.database;
  const sum = await db
    .selectFrom('ledger_entries')
    .select(sql<string>`coalesce(sum(amount_micros), 0)`.as('s'))
    .where('account_id', '=', accountId)
    .executeTakeFirstOrThrow();
  const balance = await s.services.accounts.balanceMicros(accountId);
  expect(balance).toBe(Number(sum.s));
  expect(balance).toBeGreaterThanOrEqual(0);
  return balance;
}

describe.each(dialects())('ledger on %s', (dialect) => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer(dialect);
  });
  afterAll(() => s.close());

  it('charges, refuses a short balance with balance and required, and refunds once', async () => {
    const { id } = await s.account(1);
    const { database, ledger } = s.services;
    expect(await database.tx((t) => ledger.charge(t, id, 600_000, 'task-a', 'a'))).toEqual({ ok: true, balanceAfter: 400_000 });
    expect(await database.tx((t) => ledger.charge(t, id, 500_000, 'task-b', 'b'))).toEqual({ ok: false, balance: 400_000, required: 500_000 });
    expect(await database.tx((t) => ledger.refund(t, 'task-a', 'refund', 'failed'))).toEqual({ refunded: true, amount: 600_000, balanceAfter: 1_000_000 });
    expect(await database.tx((t) => ledger.refund(t, 'task-a', 'refund', 'failed again'))).toEqual({ refunded: false, amount: 0 });
    expect(await database.tx((t) => ledger.refund(t, 'task-b', 'refund', 'never charged'))).toEqual({ refunded: false, amount: 0 });
    expect(await invariant(s, id)).toBe(1_000_000);
    const kinds = (await ledger.entries(database.db, id)).map((e) => [e.kind, e.amountMicros, e.balanceAfterMicros]);
    expect(kinds).toEqual([
      ['topup', 1_000_000, 1_000_000],
      ['charge', -600_000, 400_000],
      ['refund', 600_000, 1_000_000],
    ]);
  });

  it('a partial refund then a full refund return exactly the charge', async () => {
    const { id } = await s.account(2);
    const { database, ledger } = s.services;
    await database.tx((t) => ledger.charge(t, id, 1_500_000, 'task-p', 'auto length'));
    expect(await database.tx((t) => ledger.refund(t, 'task-p', 'partial_refund', 'unused seconds', 400_000))).toMatchObject({
      refunded: true,
      amount: 400_000,
    });
    expect(await database.tx((t) => ledger.refund(t, 'task-p', 'partial_refund', 'again', 400_000))).toEqual({ refunded: false, amount: 0 });
    expect(await database.tx((t) => ledger.refund(t, 'task-p', 'refund', 'failed'))).toMatchObject({ refunded: true, amount: 1_100_000 });
    expect(await invariant(s, id)).toBe(2_000_000);
  });

  it('a rolled-back transaction leaves no charge and no entry', async () => {
    const { id } = await s.account(1);
    const { database, ledger } = s.services;
    await expect(
      database.tx(async (t) => {
        await ledger.charge(t, id, 300_000, 'task-r', 'r');
        throw new Error('task insert failed');
      }),
    ).rejects.toThrow('task insert failed');
    expect(await invariant(s, id)).toBe(1_000_000);
    expect((await ledger.entries(database.db, id)).length).toBe(1);
  });

  it('never overdraws under concurrent charges from several processes', async () => {
    const { id } = await s.account(1); // 1.00 USD covers exactly 50 charges of 0.02
    const results = await Promise.all([1, 2, 3].map(() => worker([s.db.url, id, 'charge', '30', '20000', 'conc'])));
    const yes = results.reduce((n, r) => n + r.yes, 0);
    const no = results.reduce((n, r) => n + r.no, 0);
    expect(yes).toBe(50);
    expect(no).toBe(40);
    expect(await invariant(s, id)).toBe(0);
  }, 60_000);

  it('refunds each task exactly once under concurrent refunds from several processes', async () => {
    const { id } = await s.account(1);
    const { database, ledger } = s.services;
    for (let i = 0; i < 10; i++) await database.tx((t) => ledger.charge(t, id, 50_000, `rf-${i}`, 'x'));
    const results = await Promise.all([1, 2, 3].map(() => worker([s.db.url, id, 'refund', '10', '0', 'rf'])));
    expect(results.reduce((n, r) => n + r.yes, 0)).toBe(10);
    expect(await invariant(s, id)).toBe(1_000_000);
    const refunds = (await ledger.entries(database.db, id)).filter((e) => e.kind === 'refund');
    expect(new Set(refunds.map((e) => e.taskId)).size).toBe(10);
    expect(refunds.length).toBe(10);
  }, 60_000);

  it('never overdraws under concurrent charges and top-ups in one process', async () => {
    const { id } = await s.account(0.5);
    const { database, ledger, accounts } = s.services;
    const ops = Array.from({ length: 60 }, (_, i) =>
      i % 6 === 0 ? accounts.topup(id, 100_000, 'concurrent top-up') : database.tx((t) => ledger.charge(t, id, 70_000, `mix-${i}`, 'x')),
    );
    await Promise.all(ops);
    const balance = await invariant(s, id);
    const entries = await ledger.entries(database.db, id);
    expect(entries.every((e) => e.balanceAfterMicros >= 0)).toBe(true);
    expect(balance).toBe(entries.reduce((n, e) => n + e.amountMicros, 0));
  });
});
