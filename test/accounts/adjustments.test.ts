import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers/db.js';
import { gengate } from '../helpers/cli.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { expectLedgerInvariant } from '../tasks/support.js';

const ADMIN = 'admin-token-for-tests-0123456789';

describe.each(dialects())('operator adjustments on %s', (dialect) => {
  let s: TestServer;
  const admin = (method: string, path: string, body?: unknown) => s.call(method, `/admin/v1${path}`, { body, headers: { authorization: `Bearer ${ADMIN}` } });
  const ledger = async (id: string) => (await admin('GET', `/accounts/${id}/ledger`)).body.data as Array<Record<string, unknown>>;
  beforeAll(async () => {
    s = await startServer(dialect, { ADMIN_TOKEN: ADMIN, RUN_ENGINE: 'false' });
  });
  afterAll(() => s.close());

  it('credits and debits with a reason, as adjustment entries in the ledger', async () => {
    const { id, key } = await s.account(2);
    const credit = await admin('POST', `/accounts/${id}/adjustments`, { amount: '+1.5', reason: 'goodwill for ticket 42' });
    expect(credit.status).toBe(200);
    expect(credit.body.data).toMatchObject({ id, balance: '3.5000', balanceMicros: 3_500_000 });
    const debit = await admin('POST', `/accounts/${id}/adjustments`, { amount: -2, reason: 'duplicate top-up' });
    expect(debit.body.data.balance).toBe('1.5000');
    expect((await s.call('GET', '/api/v1/user/balance', { key })).body.data.balance).toBe('1.5000');
    const entries = await ledger(id);
    expect(entries.slice(-2)).toMatchObject([
      { kind: 'adjustment', amountMicros: 1_500_000, balanceAfter: '3.500000', reason: 'goodwill for ticket 42', taskId: null, keyId: null },
      { kind: 'adjustment', amountMicros: -2_000_000, balanceAfter: '1.500000', reason: 'duplicate top-up' },
    ]);
    await expectLedgerInvariant(s.services.database);
  });

  it('refuses a debit that would go below zero with 409 naming the balance, and writes nothing', async () => {
    const { id } = await s.account(1);
    const before = await ledger(id);
    const r = await admin('POST', `/accounts/${id}/adjustments`, { amount: '-1.000001', reason: 'chargeback' });
    expect(r.status).toBe(409);
    expect(r.body).toMatchObject({ code: 409, error: 'conflict', data: { balance: '1.0000', required: '1.0000', currency: 'USD' } });
    expect(r.body.msg).toContain(`the balance 1.0000 USD of account ${id} below zero`);
    expect(await ledger(id)).toEqual(before);
    // Exactly the balance is allowed: it reaches zero, not below.
    expect((await admin('POST', `/accounts/${id}/adjustments`, { amount: '-1', reason: 'close account' })).body.data.balance).toBe('0.0000');
    await expectLedgerInvariant(s.services.database);
  });

  it('requires a reason and a non-zero signed amount', async () => {
    const { id } = await s.account(1);
    const cases: Array<[unknown, number, RegExp]> = [
      [{ amount: '1' }, 422, /reason is required/],
      [{ amount: '1', reason: '' }, 400, /reason/],
      [{ amount: '1', reason: '   ' }, 400, /reason must be 1 to 500 characters/],
      [{ reason: 'x' }, 422, /amount is required/],
      [{ amount: '0', reason: 'x' }, 400, /amount: must be a non-zero USD amount/],
      [{ amount: '1.0000001', reason: 'x' }, 400, /amount: must be a non-zero USD amount.*got "1.0000001"/],
      [{ amount: '--1', reason: 'x' }, 400, /amount/],
      [{ amount: 1, reason: 'x', note: 'y' }, 400, /note/],
    ];
    for (const [body, status, msg] of cases) {
      const r = await admin('POST', `/accounts/${id}/adjustments`, body);
      expect(r.status, JSON.stringify(body)).toBe(status);
      expect(r.body.msg, JSON.stringify(body)).toMatch(msg);
    }
    expect((await admin('POST', '/accounts/acc_nope/adjustments', { amount: 1, reason: 'x' })).status).toBe(404);
    expect((await ledger(id)).filter((e) => e.kind === 'adjustment')).toEqual([]);
  });

  it('concurrent debits never take the balance below zero', async () => {
    const { id } = await s.account(1);
    const results = await Promise.all(Array.from({ length: 30 }, () => admin('POST', `/accounts/${id}/adjustments`, { amount: '-0.1', reason: 'burst' })));
    expect(results.filter((r) => r.status === 200)).toHaveLength(10);
    expect(results.filter((r) => r.status === 409)).toHaveLength(20);
    expect((await admin('GET', `/accounts/${id}`)).body.data.balance).toBe('0.0000');
    await expectLedgerInvariant(s.services.database);
  });

  it('gengate account adjust credits and debits; a missing reason or an overdraft fails', async () => {
    const env = { DATABASE_URL: s.db.url, DATA_DIR: s.db.dir };
    const { id } = await s.account(1);
    const plus = await gengate(['account', 'adjust', id, '--amount', '+1.5', '--reason', 'refund of invoice 9', '--json'], env);
    expect(plus.code, plus.stderr).toBe(0);
    expect(JSON.parse(plus.stdout).account.balance).toBe('2.5000');
    const minus = await gengate(['account', 'adjust', id, '--amount', '-2', '--reason', 'manual correction', '--json'], env);
    expect(minus.code, minus.stderr).toBe(0);
    expect(JSON.parse(minus.stdout).account.balance).toBe('0.5000');
    const noReason = await gengate(['account', 'adjust', id, '--amount', '1'], env);
    expect(noReason.code).not.toBe(0);
    expect(noReason.stderr).toContain('--reason');
    const over = await gengate(['account', 'adjust', id, '--amount=-0.6', '--reason', 'too much'], env);
    expect(over.code).not.toBe(0);
    expect(over.stderr).toContain('would take the balance 0.5000 USD');
    const entries = (await ledger(id)).filter((e) => e.kind === 'adjustment');
    expect(entries.map((e) => [e.amountMicros, e.reason])).toEqual([
      [1_500_000, 'refund of invoice 9'],
      [-2_000_000, 'manual correction'],
    ]);
  }, 240_000); // several runs of the real CLI or server, each a new process loading the sources: slow on a busy machine
});
