import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import type { Clock } from '../../src/clock.js';
import { migrate, type Database } from '../../src/store/index.js';
import { dialects, freshDatabase, type FreshDatabase } from '../helpers/db.js';
import { gengate } from '../helpers/cli.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { expectSpendMatchesLedger } from '../billing/money-checks.js';

const ADMIN = 'admin-token-for-tests-0123456789';
/** 0.060 USD. */
const IMAGE = { model: 'nano-banana-2', input: { prompt: 'a red fox', resolution: '2K' } };

class SetClock implements Clock {
  constructor(public t: number) {}
  now(): number {
    return this.t;
  }
  set(iso: string): void {
    this.t = Date.parse(iso);
  }
}

/** The key's counters as `period day -> micros`. */
async function counters(database: Database, keyId: string): Promise<Record<string, number>> {
  const rows = await database.db.selectFrom('key_spend').selectAll().where('key_id', '=', keyId).execute();
  return Object.fromEntries(
    rows.map((r) => [`${r.period} ${Number(r.starts_at) === 0 ? '-' : new Date(Number(r.starts_at)).toISOString().slice(0, 10)}`, Number(r.spent_micros)]),
  );
}

async function kept(database: Database, accountId: string): Promise<number> {
  const row = await database.db.selectFrom('accounts').select('key_spend_kept').where('id', '=', accountId).executeTakeFirstOrThrow();
  return Number(row.key_spend_kept);
}

describe.each(dialects())('key spend counters only where they are used (decision 1902) on %s', (dialect) => {
  let s: TestServer;
  const clock = new SetClock(Date.parse('2026-03-10T12:00:00Z'));
  const admin = (method: string, path: string, body?: unknown) => s.call(method, `/admin/v1${path}`, { body, headers: { authorization: `Bearer ${ADMIN}` } });
  const post = (key: string) => s.call('POST', '/api/v1/jobs/createTask', { key, body: IMAGE });
  const newKey = async (accountId: string, body: unknown = {}) => {
    const r = await admin('POST', `/accounts/${accountId}/keys`, body);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body.data as { key: { id: string }; apiKey: string };
  };
  beforeAll(async () => {
    // A long key cache: a budget set by another process reaches this one only after it.
    s = await startServer(dialect, { ADMIN_TOKEN: ADMIN, RUN_ENGINE: 'false', AUTH_CACHE_MS: '60000' }, undefined, { clock });
  });
  afterAll(() => s.close());

  it('writes no counters for an account without budgets; a budget set later counts the past spend from the ledger, refunds on their charge’s day', async () => {
    clock.set('2026-03-10T12:00:00Z');
    const { id } = await s.account(5);
    const k = await newKey(id);
    const first = (await post(k.apiKey)).body.data.taskId as string;
    clock.set('2026-03-11T08:00:00Z');
    expect((await post(k.apiKey)).status).toBe(200);
    // Yesterday's task is refunded today: its price goes back to yesterday.
    await s.services.database.tx((t) => s.services.ledger.refund(t, first, 'refund', 'test refund'));
    expect(await kept(s.services.database, id)).toBe(0);
    expect(await counters(s.services.database, k.key.id)).toEqual({});

    const set = await admin('POST', `/keys/${k.key.id}`, { budget: { amount: '0.1', period: 'day' } });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    expect(set.body.data).toMatchObject({ spent: '0.0600', spentMicros: 60_000, remaining: '0.0400' });
    expect(await kept(s.services.database, id)).toBe(1);
    expect(await counters(s.services.database, k.key.id)).toEqual({
      'total -': 60_000,
      'day 2026-03-10': 0,
      'day 2026-03-11': 60_000,
      'month 2026-03-01': 60_000,
    });
    const refused = await post(k.apiKey);
    expect(refused.status).toBe(402);
    expect(refused.body.data.balance).toBe('0.0400');
    clock.set('2026-03-12T08:00:00Z');
    expect((await post(k.apiKey)).status).toBe(200);
    expect(await counters(s.services.database, k.key.id)).toMatchObject({ 'total -': 120_000, 'day 2026-03-12': 60_000, 'month 2026-03-01': 120_000 });
    await expectSpendMatchesLedger(s);
  });

  it("the first key list of an account shows each key's spend from the ledger, and the account keeps counters from then on", async () => {
    clock.set('2026-03-10T12:00:00Z');
    const { id, key: first } = await s.account(5);
    const k = await newKey(id);
    expect((await post(k.apiKey)).status).toBe(200);
    expect((await post(k.apiKey)).status).toBe(200);
    expect((await post(first)).status).toBe(200);
    expect(await kept(s.services.database, id)).toBe(0);
    const keys = (await admin('GET', `/accounts/${id}/keys`)).body.data as Array<{ id: string; name: string; spent: string }>;
    expect(keys.map((x) => [x.name, x.spent]).sort()).toEqual([
      ['key 1', '0.0600'],
      ['key 2', '0.1200'],
    ]);
    expect(await kept(s.services.database, id)).toBe(1);
    expect((await post(k.apiKey)).status).toBe(200);
    expect((await admin('GET', `/accounts/${id}/keys`)).body.data.find((x: { id: string }) => x.id === k.key.id).spent).toBe('0.1800');
    await expectSpendMatchesLedger(s);
  });

  it('a budget set by another process while this one still remembers the key without it: the charges in between are counted, so the budget holds', async () => {
    clock.set('2026-03-10T12:00:00Z');
    const { id } = await s.account(5);
    const k = await newKey(id);
    // This server now remembers the key, without a budget, for a minute.
    expect((await post(k.apiKey)).status).toBe(200);
    const updated = await gengate(['key', 'update', k.key.id, '--budget', '0.15', '--budget-period', 'total', '--json'], {
      DATABASE_URL: s.db.url,
      DATA_DIR: s.db.dir,
    });
    expect(updated.code, updated.stderr).toBe(0);
    expect(JSON.parse(updated.stdout).key).toMatchObject({ spent: '0.0600', remaining: '0.0900' });
    // Not checked against the budget here (the server does not know it yet), but counted: whether a
    // charge moves the counters is read from the account's row, under the charge's own lock.
    expect((await post(k.apiKey)).status).toBe(200);
    expect(await counters(s.services.database, k.key.id)).toMatchObject({ 'total -': 120_000 });
    s.services.auth.forget();
    const refused = await post(k.apiKey);
    expect(refused.status).toBe(402);
    expect(refused.body.data.balance).toBe('0.0300');
    await expectSpendMatchesLedger(s);
  }, 240_000);

  it('creates racing the switch (another process sets a budget meanwhile) are each counted exactly once', async () => {
    clock.set('2026-03-10T12:00:00Z');
    const { id } = await s.account(100);
    const k = await newKey(id);
    expect((await post(k.apiKey)).status).toBe(200);
    const update = gengate(['key', 'update', k.key.id, '--budget', '100', '--budget-period', 'day', '--json'], { DATABASE_URL: s.db.url, DATA_DIR: s.db.dir });
    let done = false;
    void update.then(() => (done = true));
    let made = 1;
    // Waves of concurrent creates with the remembered key until the other process has committed (at
    // most 300 waves, which the balance covers, on a slow machine), and two waves after.
    for (let wave = 0, after = 0; after < 2; wave++) {
      if (done || wave >= 300) await update;
      if (done) after++;
      const results = await Promise.all(Array.from({ length: 4 }, () => post(k.apiKey)));
      expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200]);
      made += results.length;
    }
    expect((await update).code).toBe(0);
    expect(await counters(s.services.database, k.key.id)).toMatchObject({ 'total -': made * 60_000, 'day 2026-03-10': made * 60_000 });
    await expectSpendMatchesLedger(s);
  }, 240_000);
});

describe.each(dialects())('migration 018 on %s', (dialect) => {
  let fresh: FreshDatabase;
  let database: Database;
  beforeAll(async () => {
    fresh = await freshDatabase(dialect, { before: 18 });
    database = fresh.database;
  });
  afterAll(() => fresh.close());

  it('keeps the counters of accounts with a budgeted key and marks them; drops the others’ (the ledger has them)', async () => {
    await database.tx(async (t) => {
      for (const acc of ['budgeted', 'plain']) {
        await t.insertInto('accounts').values({ id: acc, name: acc, status: 'active', webhook_secret: 'x', balance_micros: 0, created_at: 0 }).execute();
      }
      const key = (id: string, acc: string, budget: number | null) =>
        sql`insert into api_keys (id, account_id, hash, prefix, created_at, name, budget_micros, budget_period)
          values (${id}, ${acc}, ${`h${id}`}, 'gg_x', 0, ${id}, ${budget}, ${budget === null ? null : 'total'})`.execute(t);
      await key('k1', 'budgeted', 1000);
      await key('k2', 'budgeted', null);
      await key('k3', 'plain', null);
      for (const k of ['k1', 'k2', 'k3']) await t.insertInto('key_spend').values({ key_id: k, period: 'total', starts_at: 0, spent_micros: 5 }).execute();
    });
    await migrate(database);
    const accounts = await database.db.selectFrom('accounts').select(['id', 'key_spend_kept']).orderBy('id').execute();
    expect(accounts.map((a) => [a.id, Number(a.key_spend_kept)])).toEqual([
      ['budgeted', 1],
      ['plain', 0],
    ]);
    const rows = await database.db.selectFrom('key_spend').select('key_id').orderBy('key_id').execute();
    expect(rows.map((r) => r.key_id)).toEqual(['k1', 'k2']);
  });
});
