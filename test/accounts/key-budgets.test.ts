import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers/db.js';
import { gengate } from '../helpers/cli.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { FAST, SetClock, create, expectLedgerInvariant, settle } from '../tasks/support.js';
import { expectSpendMatchesLedger } from '../billing/money-checks.js';

const ADMIN = 'admin-token-for-tests-0123456789';
/** 0.060 USD. */
const IMAGE = { model: 'nano-banana-2', input: { prompt: 'a red fox', resolution: '2K' } };

describe.each(dialects())('key names, expiry and budgets on %s', (dialect) => {
  let s: TestServer;
  const clock = new SetClock(Date.parse('2026-03-10T12:00:00Z'));
  const admin = (method: string, path: string, body?: unknown) => s.call(method, `/admin/v1${path}`, { body, headers: { authorization: `Bearer ${ADMIN}` } });
  const post = (key: string) => s.call('POST', '/api/v1/jobs/createTask', { key, body: IMAGE });
  const newKey = async (accountId: string, body: unknown) => {
    const r = await admin('POST', `/accounts/${accountId}/keys`, body);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body.data as { key: { id: string }; apiKey: string };
  };
  const keyOf = async (accountId: string, keyId: string) =>
    ((await admin('GET', `/accounts/${accountId}/keys`)).body.data as any[]).find((k) => k.id === keyId);
  const refund = (taskId: string) => s.services.database.tx((t) => s.services.ledger.refund(t, taskId, 'refund', 'test refund'));
  beforeAll(async () => {
    // A long key cache: expiry must not wait for it, and changes through the admin API drop it.
    s = await startServer(dialect, { ADMIN_TOKEN: ADMIN, RUN_ENGINE: 'false', AUTH_CACHE_MS: '60000' }, undefined, { clock });
  });
  afterAll(() => s.close());

  it('names keys ("key N" by default) and lists name, expiry, budget, spend and what is left', async () => {
    const { id } = await s.account(5);
    const plain = await newKey(id, {});
    const named = await newKey(id, { name: ' ci runner ', expiresAt: '2026-06-01T00:00:00Z', budget: { amount: '2.5', period: 'month' } });
    expect(named.key).toMatchObject({
      name: 'ci runner',
      expiresAt: '2026-06-01T00:00:00.000Z',
      budget: { amount: '2.5000', amountMicros: 2_500_000, period: 'month' },
    });
    expect((await post(named.apiKey)).status).toBe(200);
    const keys = (await admin('GET', `/accounts/${id}/keys`)).body.data as any[];
    expect(keys.map((k) => k.name).sort()).toEqual(['ci runner', 'key 1', 'key 2']);
    expect(keys.find((k) => k.id === plain.key.id).name).toBe('key 2');
    expect(keys.find((k) => k.id === plain.key.id)).toMatchObject({ expiresAt: null, budget: null, spent: '0.0000', remaining: null });
    expect(keys.find((k) => k.id === named.key.id)).toMatchObject({ spent: '0.0600', spentMicros: 60_000, remaining: '2.4400' });
    const entries = (await admin('GET', `/accounts/${id}/ledger`)).body.data as any[];
    expect(entries.find((e) => e.kind === 'charge')).toMatchObject({ keyId: named.key.id, amountMicros: -60_000 });
  });

  it('refuses bad names, past expiries and bad budgets with 400 naming the field', async () => {
    const { id } = await s.account(1);
    const cases: Array<[unknown, RegExp]> = [
      [{ name: '' }, /^name: /],
      [{ name: 'x'.repeat(101) }, /^name: /],
      [{ expiresAt: 'tomorrow' }, /^expiresAt: must be an ISO 8601 time/],
      [{ expiresAt: '2026-12-31T10:00:00' }, /^expiresAt: must be an ISO 8601 time with its zone/],
      [{ expiresAt: '2026-02-30T10:00:00Z' }, /^expiresAt: must be an ISO 8601 time/],
      [{ expiresAt: '2026-03-10T11:59:59Z' }, /^expiresAt must be a time in the future.*got 2026-03-10T11:59:59.000Z/],
      [{ budget: { amount: '-1' } }, /^budget.amount: must be a USD amount/],
      [{ budget: { amount: '1', period: 'week' } }, /^budget.period: .*total.*day.*month/],
    ];
    for (const [body, msg] of cases) {
      const r = await admin('POST', `/accounts/${id}/keys`, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.msg, JSON.stringify(body)).toMatch(msg);
    }
    expect((await admin('GET', `/accounts/${id}/keys`)).body.data).toHaveLength(1);
  });

  it('answers 401 naming the time once a key expired, even while it is remembered', async () => {
    const { id } = await s.account(1);
    const k = await newKey(id, { expiresAt: new Date(clock.now() + 30_000).toISOString() });
    expect((await s.call('GET', '/api/v1/user/balance', { key: k.apiKey })).status).toBe(200);
    clock.t += 29_999;
    expect((await s.call('GET', '/api/v1/user/balance', { key: k.apiKey })).status).toBe(200);
    clock.t += 1;
    const r = await s.call('GET', '/api/v1/user/balance', { key: k.apiKey });
    expect(r.status).toBe(401);
    expect(r.body).toMatchObject({ code: 401, error: 'authentication_error' });
    expect(r.body.msg).toBe(`this API key expired at ${new Date(clock.t).toISOString()}; ask the operator for a new key`);
    expect((await post(k.apiKey)).status).toBe(401);
    // The operator extends it: it works again at once.
    await admin('POST', `/keys/${k.key.id}`, { expiresAt: new Date(clock.t + 3_600_000).toISOString() });
    expect((await s.call('GET', '/api/v1/user/balance', { key: k.apiKey })).status).toBe(200);
    expect((await admin('POST', `/keys/${k.key.id}`, { expiresAt: null })).body.data.expiresAt).toBeNull();
  });

  it('a total budget answers 402 naming the budget with data.balance the remaining budget, and writes nothing', async () => {
    const { id, key: other } = await s.account(5);
    const k = await newKey(id, { name: 'capped', budget: { amount: '0.15' } });
    expect(k.key).toMatchObject({ budget: { period: 'total' } });
    expect((await post(k.apiKey)).status).toBe(200);
    expect((await post(k.apiKey)).status).toBe(200);
    const entriesBefore = (await admin('GET', `/accounts/${id}/ledger`)).body.data;
    const tasksBefore = await s.services.database.db.selectFrom('tasks').select('id').where('account_id', '=', id).execute();
    const r = await post(k.apiKey);
    expect(r.status).toBe(402);
    expect(r.body).toEqual({
      code: 402,
      error: 'payment_required',
      msg: "this API key's budget of 0.1500 USD in total has 0.0300 USD left, less than the price 0.060 USD of this task; the operator can raise the budget",
      data: { balance: '0.0300', required: '0.0600', currency: 'USD', topUpUrl: expect.any(String) },
    });
    expect((await admin('GET', `/accounts/${id}/ledger`)).body.data).toEqual(entriesBefore);
    expect(await s.services.database.db.selectFrom('tasks').select('id').where('account_id', '=', id).execute()).toEqual(tasksBefore);
    expect((await s.call('GET', '/api/v1/user/balance', { key: other })).body.data.balance).toBe('4.8800');
    // The account's other key has no budget: the balance is its only limit.
    expect((await post(other)).status).toBe(200);
    // The operator raises the budget: the key works at once.
    const raised = await admin('POST', `/keys/${k.key.id}`, { budget: { amount: '0.18' } });
    expect(raised.body.data).toMatchObject({ budget: { amount: '0.1800', period: 'total' }, spent: '0.1200', remaining: '0.0600' });
    expect((await post(k.apiKey)).status).toBe(200);
    expect((await post(k.apiKey)).status).toBe(402);
    await expectLedgerInvariant(s.services.database);
  });

  it('a refund gives the budget back, and the refund entry names the key', async () => {
    const { id } = await s.account(5);
    const k = await newKey(id, { budget: { amount: '0.12', period: 'total' } });
    const first = (await post(k.apiKey)).body.data.taskId as string;
    expect((await post(k.apiKey)).status).toBe(200);
    expect((await post(k.apiKey)).status).toBe(402);
    expect(await refund(first)).toMatchObject({ refunded: true, amount: 60_000 });
    expect(await keyOf(id, k.key.id)).toMatchObject({ spent: '0.0600', remaining: '0.0600' });
    expect((await post(k.apiKey)).status).toBe(200);
    expect((await post(k.apiKey)).status).toBe(402);
    const entries = (await admin('GET', `/accounts/${id}/ledger`)).body.data as any[];
    expect(entries.find((e) => e.kind === 'refund')).toMatchObject({ taskId: first, keyId: k.key.id, amountMicros: 60_000 });
    await expectSpendMatchesLedger(s);
  });

  it('a day budget counts the UTC day of the charge; a refund gives back to the day it was charged', async () => {
    clock.set('2026-03-31T23:30:00Z');
    const { id } = await s.account(5);
    const k = await newKey(id, { budget: { amount: '0.1', period: 'day' } });
    const yesterday = (await post(k.apiKey)).body.data.taskId as string;
    const refused = await post(k.apiKey);
    expect(refused.status).toBe(402);
    expect(refused.body.msg).toContain('budget of 0.1000 USD per day (UTC) has 0.0400 USD left');
    expect(refused.body.msg).toContain('or wait for the next day');
    expect(refused.body.data.balance).toBe('0.0400');
    clock.set('2026-04-01T00:00:00Z');
    expect(await keyOf(id, k.key.id)).toMatchObject({ spent: '0.0000', remaining: '0.1000' });
    expect((await post(k.apiKey)).status).toBe(200);
    // Yesterday's refund does not make room today.
    await refund(yesterday);
    expect((await post(k.apiKey)).status).toBe(402);
    expect(await keyOf(id, k.key.id)).toMatchObject({ spent: '0.0600', remaining: '0.0400' });
  });

  it('a month budget counts the UTC calendar month', async () => {
    clock.set('2026-04-30T23:59:59Z');
    const { id } = await s.account(5);
    const k = await newKey(id, { budget: { amount: '0.1', period: 'month' } });
    expect((await post(k.apiKey)).status).toBe(200);
    const refused = await post(k.apiKey);
    expect(refused.status).toBe(402);
    expect(refused.body.msg).toContain('per month (UTC) has 0.0400 USD left');
    clock.set('2026-05-01T00:00:00Z');
    expect((await post(k.apiKey)).status).toBe(200);
    expect((await post(k.apiKey)).status).toBe(402);
    clock.set('2026-05-31T23:59:59Z');
    expect((await post(k.apiKey)).status).toBe(402);
    await expectSpendMatchesLedger(s);
  });

  it('holds under many concurrent creates: no overspend', async () => {
    const { id } = await s.account(100);
    const k = await newKey(id, { budget: { amount: '0.6', period: 'day' } });
    const results = await Promise.all(Array.from({ length: 40 }, () => post(k.apiKey)));
    expect(results.filter((r) => r.status === 200)).toHaveLength(10);
    expect(results.filter((r) => r.status === 402)).toHaveLength(30);
    expect(await keyOf(id, k.key.id)).toMatchObject({ spent: '0.6000', remaining: '0.0000' });
    expect((await s.call('GET', '/api/v1/user/balance', { key: k.apiKey })).body.data.balance).toBe('99.4000');
    await expectLedgerInvariant(s.services.database);
    await expectSpendMatchesLedger(s);
  });

  it('updates keep what is not given: period alone, amount alone, null removes', async () => {
    const { id } = await s.account(1);
    const k = await newKey(id, { name: 'a', budget: { amount: '1', period: 'day' } });
    const upd = (body: unknown) => admin('POST', `/keys/${k.key.id}`, body);
    expect((await upd({ budget: { period: 'month' } })).body.data.budget).toEqual({ amount: '1.0000', amountMicros: 1_000_000, period: 'month' });
    expect((await upd({ budget: { amount: '2' } })).body.data.budget).toEqual({ amount: '2.0000', amountMicros: 2_000_000, period: 'month' });
    expect((await upd({ name: 'b' })).body.data).toMatchObject({ name: 'b', budget: { period: 'month' } });
    expect((await upd({ budget: null })).body.data).toMatchObject({ budget: null, remaining: null });
    const noAmount = await upd({ budget: { period: 'day' } });
    expect(noAmount.status).toBe(400);
    expect(noAmount.body.msg).toContain('budget.amount is required');
    expect((await upd({ colour: 'red' })).status).toBe(400);
    expect((await admin('POST', '/keys/key_nope', { name: 'x' })).status).toBe(404);
  });

  it('gengate key create, update and list show name, expiry, budget and spend', async () => {
    const env = { DATABASE_URL: s.db.url, DATA_DIR: s.db.dir };
    const { id } = await s.account(5);
    const made = await gengate(
      ['key', 'create', '--account', id, '--name', 'nightly', '--expires', '2026-12-31T00:00:00Z', '--budget', '5', '--budget-period', 'month', '--json'],
      env,
    );
    expect(made.code, made.stderr).toBe(0);
    const { key, apiKey } = JSON.parse(made.stdout);
    expect(key).toMatchObject({ name: 'nightly', expiresAt: '2026-12-31T00:00:00.000Z', budget: { amount: '5.0000', period: 'month' } });
    expect((await post(apiKey)).status).toBe(200);
    const updated = await gengate(['key', 'update', key.id, '--budget', '0.1', '--expires', 'never', '--json'], env);
    expect(updated.code, updated.stderr).toBe(0);
    expect(JSON.parse(updated.stdout).key).toMatchObject({ expiresAt: null, budget: { amount: '0.1000', period: 'month' } });
    const listed = await gengate(['key', 'list', '--account', id], env);
    expect(listed.stdout).toContain(`${key.id}  "nightly"`);
    expect(listed.stdout).toContain('budget=0.1000/month');
    expect(listed.stdout).toContain('expires never');
    const bad = await gengate(['key', 'update', key.id, '--budget-period', 'week'], env);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('--budget-period must be one of total, day, month (got "week")');
  }, 240_000); // several runs of the real CLI or server, each a new process loading the sources: slow on a busy machine
});

describe.each(dialects())('key budgets with the engine running on %s', (dialect) => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer(dialect, { ...FAST, ADMIN_TOKEN: ADMIN, AUTH_CACHE_MS: '0' });
    s.services.engine.start();
  });
  afterAll(() => s.close());

  it('a task that fails is refunded and its charge leaves the budget; a content check refusal is a 402 before the check', async () => {
    const { id } = await s.account(5);
    const made = await s.services.accounts.createKey(id, { name: 'engine', budget: { micros: 60_000, period: 'day' } });
    const failed = await create(s, made.apiKey, 'nano-banana-2', { prompt: 'a cat gengate:fail=500', resolution: '2K' });
    expect((await settle(s, made.apiKey, failed)).state).toBe('fail');
    const key = (await s.services.accounts.listKeys(id)).find((k) => k.id === made.key.id)!;
    expect(key).toMatchObject({ spent: '0.0000', remaining: '0.0600' });
    const ok = await create(s, made.apiKey, 'nano-banana-2', { prompt: 'a cat', resolution: '2K' });
    expect((await settle(s, made.apiKey, ok)).state).toBe('success');
    // Spent: even a request that asks for the content check is refused by the budget first.
    const r = await s.call('POST', '/api/v1/jobs/createTask', { key: made.apiKey, body: { ...IMAGE, input: { ...IMAGE.input, nsfw_check: true } } });
    expect(r.status).toBe(402);
    expect(r.body.data.balance).toBe('0.0000');
    await expectLedgerInvariant(s.services.database);
    await expectSpendMatchesLedger(s);
  });
});
