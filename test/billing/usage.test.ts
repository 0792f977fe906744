import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ledger } from '../../src/billing/index.js';
import { dialects } from '../helpers/db.js';
import { gengate } from '../helpers/cli.js';
import { startServer, type TestServer } from '../helpers/server.js';

const ADMIN = 'admin-token-for-usage-tests-0123';
const USD = 1_000_000;
const at = (iso: string) => Date.parse(iso);

describe.each(dialects())('usage from the ledger on %s', (dialect) => {
  let s: TestServer;
  let a: { id: string; key: string };
  let b: { id: string; key: string };
  let alpha: string;
  let beta: string;
  const time = { now: Date.now() };
  const ledger = new Ledger({ now: () => time.now });
  const write = (iso: string, fn: (t: never) => Promise<unknown>) => {
    time.now = at(iso);
    return s.services.database.tx(fn as never);
  };
  const admin = (path: string) => s.call('GET', `/admin/v1${path}`, { headers: { authorization: `Bearer ${ADMIN}` } });

  beforeAll(async () => {
    s = await startServer(dialect, { ADMIN_TOKEN: ADMIN, RUN_ENGINE: 'false' });
    a = await s.account(100, 'usage a');
    b = await s.account(100, 'usage b');
    alpha = (await s.services.accounts.createKey(a.id, { name: 'alpha' })).key.id;
    beta = (await s.services.accounts.createKey(a.id, { name: 'beta' })).key.id;
    const charge = (iso: string, task: string, usd: number, model: string, key: string | null, account = a.id) =>
      write(iso, (t) => ledger.charge(t, account, usd * USD, task, `task ${task}`, key, model));
    // A's fixtures around the UTC midnights of 2026-03-10 and 2026-03-11.
    await charge('2026-03-09T23:59:59.999Z', 'u1', 1, 'm-x', alpha);
    await charge('2026-03-10T00:00:00.000Z', 'u2', 2, 'm-y', beta);
    await charge('2026-03-10T12:00:00.000Z', 'u3', 0.5, 'm-x', alpha);
    await write('2026-03-10T12:05:00.000Z', (t) => ledger.refund(t, 'u3', 'refund', 'failed'));
    await charge('2026-03-10T23:50:00.000Z', 'u4', 3, 'm-y', alpha);
    // A partial refund after midnight counts on the day it was made.
    await write('2026-03-11T00:10:00.000Z', (t) => ledger.refund(t, 'u4', 'partial_refund', 'shorter', 1 * USD));
    await charge('2026-03-12T00:00:00.000Z', 'u5', 4, 'm-x', null);
    // Money that is not spend: a top-up and an adjustment on the same days.
    await write('2026-03-10T08:00:00.000Z', (t) => ledger.credit(t, a.id, 7 * USD, 'topup', 'top-up'));
    await write('2026-03-10T09:00:00.000Z', (t) => ledger.debitAdjustment(t, a.id, 0.25 * USD, 'correction'));
    // Another account's spend on the same day.
    await charge('2026-03-10T10:00:00.000Z', 'v1', 9, 'm-x', null, b.id);
  });
  afterAll(() => s.close());

  const usage = (key: string, query: string) => s.call('GET', `/api/v1/usage?${query}`, { key });

  it('spend per UTC day, net of refunds, every day of the period listed', async () => {
    const r = await usage(a.key, 'from=2026-03-09&to=2026-03-11&group=day');
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.data).toMatchObject({
      accountId: a.id,
      from: '2026-03-09T00:00:00.000Z',
      to: '2026-03-12T00:00:00.000Z',
      group: 'day',
      currency: 'USD',
      total: { spent: '5.000000', charged: '6.500000', refunded: '1.500000', spentMicros: 5 * USD, tasks: 4 },
    });
    expect(r.body.data.rows).toEqual([
      { day: '2026-03-09', spent: '1.000000', charged: '1.000000', refunded: '0.000000', spentMicros: USD, tasks: 1 },
      { day: '2026-03-10', spent: '5.000000', charged: '5.500000', refunded: '0.500000', spentMicros: 5 * USD, tasks: 3 },
      { day: '2026-03-11', spent: '-1.000000', charged: '0.000000', refunded: '1.000000', spentMicros: -USD, tasks: 0 },
    ]);
  });

  it('cuts the period at UTC midnights and at ISO times, to exclusive', async () => {
    const day = await usage(a.key, 'from=2026-03-10&to=2026-03-10');
    expect(day.body.data.rows.map((r: { day: string }) => r.day)).toEqual(['2026-03-10']);
    expect(day.body.data.total).toMatchObject({ spent: '5.000000', tasks: 3 });
    // The charge at 23:59:59.999 on the 9th belongs to the 9th; the one at 00:00:00.000 on the 10th to the 10th.
    const edge = await usage(a.key, 'from=2026-03-09T23:59:59.999Z&to=2026-03-10T00:00:00.000Z');
    expect(edge.body.data.total).toMatchObject({ spent: '1.000000', tasks: 1 });
    const zoned = await usage(a.key, `from=${encodeURIComponent('2026-03-10T01:00:00+01:00')}&to=2026-03-10T00:00:00.001Z`);
    expect(zoned.body.data.total).toMatchObject({ spent: '2.000000', tasks: 1 });
  });

  it('spend per model and per key, largest first, with the key names', async () => {
    const models = await usage(a.key, 'from=2026-03-01&to=2026-03-11&group=model');
    expect(models.body.data.rows).toEqual([
      { model: 'm-y', spent: '4.000000', charged: '5.000000', refunded: '1.000000', spentMicros: 4 * USD, tasks: 2 },
      { model: 'm-x', spent: '1.000000', charged: '1.500000', refunded: '0.500000', spentMicros: USD, tasks: 2 },
    ]);
    const keys = await usage(a.key, 'from=2026-03-01&to=2026-03-31&group=key');
    expect(keys.body.data.rows).toEqual([
      { keyId: null, keyName: null, spent: '4.000000', charged: '4.000000', refunded: '0.000000', spentMicros: 4 * USD, tasks: 1 },
      { keyId: alpha, keyName: 'alpha', spent: '3.000000', charged: '4.500000', refunded: '1.500000', spentMicros: 3 * USD, tasks: 3 },
      { keyId: beta, keyName: 'beta', spent: '2.000000', charged: '2.000000', refunded: '0.000000', spentMicros: 2 * USD, tasks: 1 },
    ]);
  });

  it('answers CSV with a header line', async () => {
    const r = await fetch(`${s.url}/api/v1/usage?from=2026-03-09&to=2026-03-11&format=csv`, { headers: { authorization: `Bearer ${a.key}` } });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(await r.text()).toBe(
      'day,spent_usd,charged_usd,refunded_usd,tasks\n2026-03-09,1.000000,1.000000,0.000000,1\n2026-03-10,5.000000,5.500000,0.500000,3\n2026-03-11,-1.000000,0.000000,1.000000,0\n',
    );
    const keys = await fetch(`${s.url}/api/v1/usage?from=2026-03-10&to=2026-03-10&group=key&format=csv`, { headers: { authorization: `Bearer ${a.key}` } });
    expect((await keys.text()).split('\n').slice(0, 2)).toEqual([
      'key_id,key_name,spent_usd,charged_usd,refunded_usd,tasks',
      `${alpha},alpha,3.000000,3.500000,0.500000,2`,
    ]);
  });

  it("shows an account only its own spend; the operator sees any account's", async () => {
    const own = await usage(b.key, 'from=2026-03-10&to=2026-03-10&group=model');
    expect(own.body.data).toMatchObject({ accountId: b.id, rows: [{ model: 'm-x', spent: '9.000000' }] });
    const byAdmin = await admin(`/accounts/${a.id}/usage?from=2026-03-10&to=2026-03-10`);
    expect(byAdmin.status).toBe(200);
    expect(byAdmin.body.data).toMatchObject({ accountId: a.id, total: { spent: '5.000000' } });
    const csv = await fetch(`${s.url}/admin/v1/accounts/${b.id}/usage?from=2026-03-10&to=2026-03-10&format=csv&group=model`, {
      headers: { authorization: `Bearer ${ADMIN}` },
    });
    expect(await csv.text()).toBe('model,spent_usd,charged_usd,refunded_usd,tasks\nm-x,9.000000,9.000000,0.000000,1\n');
    expect((await admin('/accounts/acc_nope/usage')).status).toBe(404);
    // A key cannot ask for another account: there is no parameter for it.
    expect((await usage(b.key, `accountId=${a.id}`)).status).toBe(400);
  });

  it("works with a member's session instead of a key: the session's account only", async () => {
    const member = await s.services.members.create(b.id, 'usage-reader@example.com', 'member', 'a long enough password 1');
    expect(member).toBeTruthy();
    const signin = await fetch(`${s.url}/api/v1/auth/signin`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'usage-reader@example.com', password: 'a long enough password 1' }),
    });
    expect(signin.status).toBe(200);
    const cookie = signin.headers.get('set-cookie')!.split(';')[0]!;
    const r = await fetch(`${s.url}/api/v1/usage?from=2026-03-10&to=2026-03-10&group=key`, { headers: { cookie } });
    expect(r.status).toBe(200);
    expect(((await r.json()) as { data: unknown }).data).toMatchObject({ accountId: b.id, total: { spent: '9.000000' } });
  });

  it('needs the balance:read scope', async () => {
    const { apiKey } = await s.services.accounts.createKey(a.id, { scopes: ['tasks:write'] });
    const r = await usage(apiKey, 'from=2026-03-10');
    expect(r.status).toBe(403);
    expect(r.body.msg).toContain('balance:read');
    expect((await s.call('GET', '/api/v1/usage')).status).toBe(401);
  });

  it('refuses bad parameters with a message naming the field and what is allowed', async () => {
    const cases: Array<[string, RegExp]> = [
      ['group=week', /group: must be one of "day", "model", "key"/],
      ['format=xml', /format: must be "json" or "csv"/],
      ['from=2026-02-30', /from must be a date such as "2026-11-01"/],
      ['to=yesterday', /to must be a date/],
      ['from=2026-03-11&to=2026-03-10', /from must be before to/],
      ['from=2025-01-01&to=2026-03-10', /at most 366 days/],
      ['grop=model', /unknown query parameter "grop"; usage takes from, to, group, format/],
    ];
    for (const [query, msg] of cases) {
      const r = await usage(a.key, query);
      expect(r.status, query).toBe(400);
      expect(r.body.msg, query).toMatch(msg);
    }
  });

  it('defaults to the last 30 UTC days, today included', async () => {
    const c = await s.account(5);
    await write(new Date().toISOString(), (t) => ledger.charge(t, c.id, 0.3 * USD, 'today-1', 'x', null, 'm-z'));
    const r = await usage(c.key, '');
    expect(r.body.data.rows).toHaveLength(30);
    expect(r.body.data.rows.at(-1)).toMatchObject({ day: new Date().toISOString().slice(0, 10), spent: '0.300000', tasks: 1 });
  });

  it('gengate usage prints the same figures (text, --json, --csv) and refuses a bad --by', async () => {
    const env = { DATABASE_URL: s.db.url, DATA_DIR: s.db.dir };
    const csv = await gengate(['usage', '--account', a.id, '--from', '2026-03-01', '--to', '2026-03-11', '--by', 'model', '--csv'], env);
    expect(csv.code, csv.stderr).toBe(0);
    expect(csv.stdout).toBe('model,spent_usd,charged_usd,refunded_usd,tasks\nm-y,4.000000,5.000000,1.000000,2\nm-x,1.000000,1.500000,0.500000,2\n');
    const json = await gengate(['usage', '--account', a.id, '--from', '2026-03-10', '--to', '2026-03-10', '--by', 'key', '--json'], env);
    expect(JSON.parse(json.stdout)).toMatchObject({ accountId: a.id, group: 'key', total: { spent: '5.000000', tasks: 3 } });
    const text = await gengate(['usage', '--account', a.id, '--from', '2026-03-09', '--to', '2026-03-11'], env);
    expect(text.stdout).toMatch(/^2026-03-10\s+5\.000000 {2}\(charged 5\.500000, refunded 0\.500000, 3 tasks\)$/m);
    expect(text.stdout).toMatch(/^total USD\s+5\.000000/m);
    const bad = await gengate(['usage', '--account', a.id, '--by', 'week'], env);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('--by must be one of day, model, key');
  }, 240_000); // several runs of the real CLI or server, each a new process loading the sources: slow on a busy machine
});
