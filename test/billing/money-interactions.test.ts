import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects, onPostgres } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { FAST, SetClock, create, eventually, settle, taskEntries } from '../tasks/support.js';
import { asBrowser, signedIn } from '../members/support.js';
import { SECRET_KEY, WEBHOOK_SECRET, cardTopUp, completed, deliver, disputed, refunded, startFakeStripe } from '../fakes/stripe.js';
import { formatUsd } from '../../src/billing/index.js';
import { KIE_CASES } from '../catalog/kie-cases.js';
import { expectMoneyInvariant, expectSpendMatchesLedger } from './money-checks.js';

const ADMIN = 'admin-token-for-money-review-0123';
/** 0.060 USD. */
const IMAGE = { model: 'nano-banana-2', input: { prompt: 'a red fox', resolution: '2K' } };
const PRICE = 60_000;
const PASSWORD = 'a long enough password 1';

/**
 * Where the money features meet (the cross-feature review): key budgets and their counters (1902),
 * cancel (1901), card top-ups, refunds and disputes (1904), low-balance alerts (1905), usage and the
 * money report (1906), member sessions (1903, 1907), the kie.ai and Suno faces (0402, 0404). Every
 * test ends with the invariants of test/billing/money-checks.ts.
 */
describe.each(dialects())('money across features on %s', (dialect) => {
  let s: TestServer;
  let stripe: Awaited<ReturnType<typeof startFakeStripe>>;
  const admin = (method: string, path: string, body?: unknown) => s.call(method, `/admin/v1${path}`, { body, headers: { authorization: `Bearer ${ADMIN}` } });
  const post = (key: string, body: unknown = IMAGE) => s.call('POST', '/api/v1/jobs/createTask', { key, body });
  const balance = (id: string) => s.services.accounts.balanceMicros(id);
  const budgetKey = async (accountId: string, amount: string, period: string) => {
    const r = await admin('POST', `/accounts/${accountId}/keys`, { budget: { amount, period } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return { id: r.body.data.key.id as string, key: r.body.data.apiKey as string };
  };
  const keyView = async (accountId: string, keyId: string) =>
    ((await admin('GET', `/accounts/${accountId}/keys`)).body.data as any[]).find((k) => k.id === keyId);
  /** The account's first key (made with the account: "key 1"). */
  const firstKey = async (accountId: string) =>
    ((await admin('GET', `/accounts/${accountId}/keys`)).body.data as Array<{ id: string; name: string }>).find((k) => k.name === 'key 1')!;
  const usage = async (accountId: string, group: string) => {
    const r = await admin('GET', `/accounts/${accountId}/usage?group=${group}`);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body.data;
  };
  const alertEvents = (accountId: string) =>
    s.services.database.db
      .selectFrom('account_events')
      .select(['id', 'channel', 'body'])
      .where('account_id', '=', accountId)
      .where('channel', '=', 'webhook')
      .execute();
  const armed = async (accountId: string) =>
    Number((await s.services.database.db.selectFrom('accounts').select('alert_armed').where('id', '=', accountId).executeTakeFirstOrThrow()).alert_armed) === 1;
  const setAlert = async (key: string, levelMicros: number) => {
    const r = await s.call('PUT', '/api/v1/account/alert', { key, body: { level: formatUsd(levelMicros, 6), url: 'http://127.0.0.1:9/hook' } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
  };
  const card = (usd: string) => cardTopUp(s, stripe, usd);

  beforeAll(async () => {
    stripe = await startFakeStripe();
    // The engine is off until a test starts it: tasks stay `waiting`, so cancels are the waiting path.
    s = await startServer(dialect, {
      ...FAST,
      ADMIN_TOKEN: ADMIN,
      STRIPE_SECRET_KEY: SECRET_KEY,
      STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
      STRIPE_API_BASE: stripe.url,
      TOPUP_MIN: '5',
      TOPUP_MAX: '500',
      ALLOW_PRIVATE_NETWORK: 'true',
    });
  });
  afterAll(async () => {
    await s?.close();
    await stripe?.close();
  });

  it("a member's session spends without a key: the ledger, usage by key and the spend counters name no key", async () => {
    const a = await s.account(1);
    await s.services.members.create(a.id, `owner-${dialect}@example.com`, 'owner', PASSWORD);
    const b = await signedIn(await s.call('POST', '/api/v1/auth/signin', { body: { email: `owner-${dialect}@example.com`, password: PASSWORD } }));
    const browser = asBrowser(s, b);
    const r = await browser('POST', '/api/v1/jobs/createTask', { body: IMAGE });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const charge = await s.services.database.db
      .selectFrom('ledger_entries')
      .select(['key_id', 'model'])
      .where('task_id', '=', r.body.data.taskId)
      .executeTakeFirstOrThrow();
    expect(charge).toEqual({ key_id: null, model: 'nano-banana-2' });
    const byKey = await usage(a.id, 'key');
    expect(byKey.rows).toEqual([expect.objectContaining({ keyId: null, keyName: null, spentMicros: PRICE })]);
    // A cancel through the session refunds to the same (no) key.
    const c = await browser('POST', '/api/v1/jobs/cancel', { body: { taskId: r.body.data.taskId } });
    expect(c.status, JSON.stringify(c.body)).toBe(200);
    expect((await usage(a.id, 'key')).total.spentMicros).toBe(0);
    await expectMoneyInvariant(s, ADMIN);
  });

  it("a session opened with a budgeted key spends that key's budget; the owner's session beside it spends no key's", async () => {
    const a = await s.account(1);
    const made = await admin('POST', `/accounts/${a.id}/keys`, {
      scopes: ['tasks:write', 'tasks:read', 'balance:read'],
      budget: { amount: '0.06', period: 'day' },
    });
    expect(made.status, JSON.stringify(made.body)).toBe(200);
    const keyId = made.body.data.key.id as string;
    const viaKey = asBrowser(s, await signedIn(await s.call('POST', '/api/v1/auth/signin/key', { body: { apiKey: made.body.data.apiKey } })));
    expect((await viaKey('POST', '/api/v1/jobs/createTask', { body: IMAGE })).status).toBe(200);
    const over = await viaKey('POST', '/api/v1/jobs/createTask', { body: IMAGE });
    expect(over.status, JSON.stringify(over.body)).toBe(402);
    expect(over.body.msg).toContain('budget');
    expect(await keyView(a.id, keyId)).toMatchObject({ spentMicros: PRICE, remaining: '0.0000' });
    await s.services.members.create(a.id, `boss-${dialect}@example.com`, 'owner', PASSWORD);
    const owner = asBrowser(
      s,
      await signedIn(await s.call('POST', '/api/v1/auth/signin', { body: { email: `boss-${dialect}@example.com`, password: PASSWORD } })),
    );
    expect((await owner('POST', '/api/v1/jobs/createTask', { body: IMAGE })).status).toBe(200);
    expect(await keyView(a.id, keyId)).toMatchObject({ spentMicros: PRICE });
    const byKey = (await usage(a.id, 'key')).rows.map((r: { keyId: string | null; spentMicros: number }) => [r.keyId, r.spentMicros]);
    expect(byKey.sort()).toEqual(
      [
        [keyId, PRICE],
        [null, PRICE],
      ].sort(),
    );
    await expectMoneyInvariant(s, ADMIN);
  });

  it('a key made by a key through /api/v1/keys with a budget: its spend, its refunds and a budget change by its maker stay exact', async () => {
    const a = await s.account(1);
    const child = await s.call('POST', '/api/v1/keys', { key: a.key, body: { name: 'ci', budget: { amount: '0.06', period: 'month' } } });
    expect(child.status, JSON.stringify(child.body)).toBe(200);
    const c = { id: child.body.data.key.id as string, key: child.body.data.apiKey as string };
    const t = await create(s, c.key, IMAGE.model, IMAGE.input);
    expect((await post(c.key)).status).toBe(402);
    // The maker raises the budget: the spend so far counts against the new one.
    const raised = await s.call('POST', `/api/v1/keys/${c.id}`, { key: a.key, body: { budget: { amount: '0.12' } } });
    expect(raised.status, JSON.stringify(raised.body)).toBe(200);
    expect(raised.body.data).toMatchObject({ spentMicros: PRICE, remaining: '0.0600' });
    await create(s, c.key, IMAGE.model, IMAGE.input);
    expect((await post(c.key)).status).toBe(402);
    // The maker cancels the child's task (same account): the refund goes back to the child's budget.
    expect((await s.call('POST', '/api/v1/jobs/cancel', { key: a.key, body: { taskId: t } })).status).toBe(200);
    const list = await s.call('GET', '/api/v1/keys', { key: a.key });
    expect(list.body.data.find((k: { id: string }) => k.id === c.id)).toMatchObject({ spentMicros: PRICE, remaining: '0.0600' });
    // Revoking the maker revokes the child; its spend stays on the record.
    expect((await admin('POST', `/keys/${(await firstKey(a.id)).id}/revoke`)).status).toBe(200);
    expect((await post(c.key)).status).toBe(401);
    await expectMoneyInvariant(s, ADMIN);
  });

  it('cancel of a waiting task of a day-budget key: the budget gets the price back once, usage nets it, the report reconciles', async () => {
    const a = await s.account(1);
    const k = await budgetKey(a.id, '0.12', 'day');
    const t1 = await create(s, k.key, IMAGE.model, IMAGE.input);
    const t2 = await create(s, k.key, IMAGE.model, IMAGE.input);
    expect((await post(k.key)).status).toBe(402); // the budget is spent
    // Two concurrent cancels and the engine's refund path on the same task: one refund.
    const [c1, c2] = await Promise.all([
      s.call('POST', '/api/v1/jobs/cancel', { key: k.key, body: { taskId: t1 } }),
      s.call('POST', '/api/v1/jobs/cancel', { key: k.key, body: { taskId: t1 } }),
      s.services.database.tx((trx) => s.services.ledger.refund(trx, t1, 'refund', 'engine failure (test)')),
    ]);
    expect([c1!.status, c2!.status].sort()).toEqual([200, 409]);
    expect(await taskEntries(s, t1)).toEqual({ charge: -PRICE, refund: PRICE });
    expect(await keyView(a.id, k.id)).toMatchObject({ spentMicros: PRICE, remaining: '0.0600' });
    expect(await balance(a.id)).toBe(1_000_000 - PRICE);
    // The price came back to the budget once: one more create passes, the next is refused.
    const t3 = await create(s, k.key, IMAGE.model, IMAGE.input);
    const refused = await post(k.key);
    expect(refused.status).toBe(402);
    expect(refused.body.msg).toContain('budget');
    const byKey = await usage(a.id, 'key');
    expect(byKey.rows).toEqual([expect.objectContaining({ keyId: k.id, charged: '0.180000', refunded: '0.060000', spentMicros: 2 * PRICE, tasks: 3 })]);
    expect(byKey.total.spentMicros).toBe(2 * PRICE);
    expect([t2, t3].every(Boolean)).toBe(true);
    await expectMoneyInvariant(s, ADMIN);
  });

  it('a charge that crosses the alert level while a budget refuses other concurrent creates: one alert, none from the refusals', async () => {
    const a = await s.account(0.3);
    const k = await budgetKey(a.id, '0.06', 'total');
    // Balance 0.30; the level 0.15 is crossed by the third charge.
    await setAlert(a.key, 150_000);
    const results = await Promise.all([...Array.from({ length: 6 }, () => post(k.key)), ...Array.from({ length: 4 }, () => post(a.key))]);
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((x) => x === 200)).toHaveLength(5);
    expect(statuses.filter((x) => x === 402)).toHaveLength(5);
    expect(await balance(a.id)).toBe(300_000 - 5 * PRICE);
    expect(await alertEvents(a.id)).toHaveLength(1);
    expect(await armed(a.id)).toBe(false);
    // A refused create (balance 0 now) fires nothing either.
    expect((await post(a.key)).status).toBe(402);
    expect(await alertEvents(a.id)).toHaveLength(1);
    // Cancels refund three tasks, the budgeted key's among them: 0.18 is back above the level (armed again)
    // and the key's budget is free again; its next create crosses the level: a second alert.
    const keyed = results.slice(0, 6).find((r) => r.status === 200)!.body.data.taskId as string;
    const plain = results
      .slice(6)
      .filter((r) => r.status === 200)
      .map((r) => r.body.data.taskId as string);
    for (const id of [keyed, ...plain.slice(0, 2)])
      expect((await s.call('POST', '/api/v1/jobs/cancel', { key: a.key, body: { taskId: id } })).status).toBe(200);
    expect(await balance(a.id)).toBe(3 * PRICE);
    expect(await armed(a.id)).toBe(true);
    expect(await keyView(a.id, k.id)).toMatchObject({ spentMicros: 0 });
    expect((await post(k.key)).status).toBe(200);
    expect(await alertEvents(a.id)).toHaveLength(2);
    await expectMoneyInvariant(s, ADMIN);
  });

  it('a Stripe refund that crosses the level fires the alert (a debit, decision 1905); the next card top-up re-arms it', async () => {
    const c = await card('10');
    await setAlert(c.key, 5_000_000);
    expect(await armed(c.id)).toBe(true);
    // 6 USD of the 10 refunded: the balance falls to 4, below the level.
    expect((await deliver(s.url, refunded(c.session, 600))).body.outcome).toBe('reversal_applied');
    expect(await balance(c.id)).toBe(4_000_000);
    const events = await alertEvents(c.id);
    expect(events).toHaveLength(1);
    expect(JSON.parse(events[0]!.body)).toMatchObject({ type: 'balance.low', balance: '4.0000', level: '5.0000' });
    // The same refund again (a replay) moves nothing and sends nothing.
    expect((await deliver(s.url, refunded(c.session, 600))).body.outcome).toBe('duplicate');
    expect(await alertEvents(c.id)).toHaveLength(1);
    // A second card top-up lifts the balance above the level: armed again, and the next fall alerts again.
    const r = await s.call('POST', '/api/v1/topups', { key: c.key, body: { amount: '5' } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect((await deliver(s.url, completed(stripe.session(r.body.data.sessionId)))).body.outcome).toBe('credited');
    expect(await armed(c.id)).toBe(true);
    await admin('POST', `/accounts/${c.id}/adjustments`, { amount: '-4.5', reason: 'review: a debit below the level' });
    expect(await alertEvents(c.id)).toHaveLength(2);
    await expectMoneyInvariant(s, ADMIN);
  });

  it('a dispute larger than the balance: the balance stops at zero, the remainder is unpaid in the report, which reconciles', async () => {
    const c = await card('5');
    const k = await budgetKey(c.id, '1', 'month');
    const t = await create(s, k.key, IMAGE.model, IMAGE.input);
    expect((await deliver(s.url, disputed(c.session, 500))).body.outcome).toBe('reversal_applied');
    expect(await balance(c.id)).toBe(0);
    const reversal = await s.services.database.db
      .selectFrom('topup_reversals')
      .selectAll()
      .where('payment_intent', '=', c.session.paymentIntent)
      .executeTakeFirstOrThrow();
    expect(Number(reversal.debited_micros)).toBe(5_000_000 - PRICE);
    expect(Number(reversal.unpaid_micros)).toBe(PRICE);
    const report = (await admin('GET', '/report')).body.data;
    expect(Number(report.total.stripe.unpaid)).toBeGreaterThanOrEqual(PRICE / 1e6);
    expect(report.reconciliation.reconciled).toBe(true);
    // The task still running is cancelled: the refund lands on a zero balance, the key's budget gets it back.
    const cancel = await s.call('POST', '/api/v1/jobs/cancel', { key: k.key, body: { taskId: t } });
    expect(cancel.status, JSON.stringify(cancel.body)).toBe(200);
    expect(await balance(c.id)).toBe(PRICE);
    expect(await keyView(c.id, k.id)).toMatchObject({ spentMicros: 0 });
    // The usage is the tasks only: the dispute is not spend.
    expect((await usage(c.id, 'model')).total.spentMicros).toBe(0);
    await expectMoneyInvariant(s, ADMIN);
  });

  // PostgreSQL only: SQLite has one writer, so nothing can commit between the refund's read and its debit.
  onPostgres(dialect)('a Stripe refund waiting on the account row behind a credit takes what the balance holds once the credit commits', async () => {
    const c = await card('10');
    expect((await admin('POST', `/accounts/${c.id}/adjustments`, { amount: '-8', reason: 'review: spend most of it' })).status).toBe(200);
    // A credit of 5 holds the account row (uncommitted) while the refund of the whole 10 arrives.
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let holding!: () => void;
    const held = new Promise<void>((r) => (holding = r));
    const credit = s.services.database.tx(async (trx) => {
      await s.services.ledger.credit(trx, c.id, 5_000_000, 'adjustment', 'review: a credit racing a Stripe refund');
      holding();
      await gate;
    });
    const waiting = async () => {
      const { rows } = await sql<{
        n: number;
      }>`select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`.execute(s.services.database.db);
      return rows[0]!.n > 0;
    };
    // The refund is sent only once the credit holds the row (a refund that got there first would take 2).
    await held;
    const refund = deliver(s.url, refunded(c.session, 1000));
    try {
      await eventually(waiting, 10_000, 'the refund to wait for the account row');
    } finally {
      release(); // a credit left open would hold its connection and stall the server's close
    }
    await credit;
    expect((await refund).body.outcome).toBe('reversal_applied');
    // 2 + 5 were there when the debit ran: 7 is taken, 3 unpaid (not 2 taken and 8 unpaid, leaving 5).
    const reversal = await s.services.database.db
      .selectFrom('topup_reversals')
      .selectAll()
      .where('payment_intent', '=', c.session.paymentIntent)
      .executeTakeFirstOrThrow();
    expect({ debited: Number(reversal.debited_micros), unpaid: Number(reversal.unpaid_micros) }).toEqual({ debited: 7_000_000, unpaid: 3_000_000 });
    expect(await balance(c.id)).toBe(0);
    await expectMoneyInvariant(s, ADMIN);
  });

  it('a task made through the Suno endpoint or under a kie.ai model id is charged under the canonical model id', async () => {
    const a = await s.account(5);
    const k = await budgetKey(a.id, '5', 'month');
    const suno = await s.call('POST', '/api/v1/generate', {
      key: k.key,
      body: { prompt: 'a calm song about the sea', customMode: false, instrumental: false, model: 'V4_5', callBackUrl: '' },
    });
    expect(suno.status, JSON.stringify(suno.body)).toBe(200);
    const alias = KIE_CASES.find((c) => c.kie !== c.model && !/(edit|image-to|video-to|reference)/.test(c.kie) && !JSON.stringify(c.sent).includes('http'))!;
    const kie = await post(k.key, { model: alias.kie, input: alias.sent, callBackUrl: '' });
    expect(kie.status, JSON.stringify(kie.body)).toBe(200);
    const models = (await usage(a.id, 'model')).rows.map((r: { model: string }) => r.model).sort();
    const ids = await s.services.database.db.selectFrom('tasks').select(['id', 'model']).where('account_id', '=', a.id).execute();
    // The ledger's model is the task's model, which is a catalog id.
    expect(models).toEqual(ids.map((t) => t.model).sort());
    for (const m of models) expect(s.services.catalog.models.map((x: { id: string }) => x.id)).toContain(m);
    expect(models).toEqual(['suno-v6', alias.model].sort());
    await expectSpendMatchesLedger(s);
    await expectMoneyInvariant(s, ADMIN);
  });

  it('automatic length with a month budget: the partial refund gives the budget back, usage by model and key net it', async () => {
    s.services.engine.start();
    const a = await s.account(10);
    const k = await budgetKey(a.id, '5', 'month');
    const id = await create(s, k.key, 'seedance-2.5', { prompt: 'how long?', duration: 'auto', resolution: '480p' });
    const done = await settle(s, k.key, id);
    expect(done.state).toBe('success');
    const entries = await taskEntries(s, id);
    expect(entries.charge).toBe(-3_750_000);
    const final = 3_750_000 - entries.partial_refund!;
    expect(entries.partial_refund).toBeGreaterThan(0);
    expect(await keyView(a.id, k.id)).toMatchObject({ spentMicros: final });
    expect((await usage(a.id, 'model')).rows).toEqual([expect.objectContaining({ model: 'seedance-2.5', spentMicros: final })]);
    expect((await usage(a.id, 'key')).rows).toEqual([expect.objectContaining({ keyId: k.id, spentMicros: final })]);
    await eventually(
      async () =>
        (await s.services.database.db.selectFrom('tasks').select('state').where('state', 'in', ['waiting', 'queuing', 'generating']).execute()).length === 0,
    );
    await expectMoneyInvariant(s, ADMIN);
  });
});

describe.each(dialects())('a refund after midnight on %s', (dialect) => {
  let s: TestServer;
  const clock = new SetClock(Date.parse('2026-03-10T23:59:00Z'));
  const admin = (path: string, body?: unknown) =>
    s.call(body === undefined ? 'GET' : 'POST', `/admin/v1${path}`, { body, headers: { authorization: `Bearer ${ADMIN}` } });
  beforeAll(async () => {
    s = await startServer(dialect, { ADMIN_TOKEN: ADMIN, RUN_ENGINE: 'false' }, undefined, { clock });
  });
  afterAll(() => s?.close());

  it("gives the budget back to the charge's day (1902) and counts in usage and the report on its own day (1906); both reconcile", async () => {
    const a = await s.account(1);
    const made = await admin(`/accounts/${a.id}/keys`, { budget: { amount: '0.06', period: 'day' } });
    expect(made.status, JSON.stringify(made.body)).toBe(200);
    const key = made.body.data.apiKey as string;
    const keyId = made.body.data.key.id as string;
    const t1 = await create(s, key, IMAGE.model, IMAGE.input);
    clock.set('2026-03-11T00:01:00Z');
    // The new day has its own budget: one create passes, a second is refused.
    await create(s, key, IMAGE.model, IMAGE.input);
    expect((await s.call('POST', '/api/v1/jobs/createTask', { key, body: IMAGE })).status).toBe(402);
    // Yesterday's task is cancelled today: its price goes back to yesterday's budget, not today's.
    expect((await s.call('POST', '/api/v1/jobs/cancel', { key, body: { taskId: t1 } })).status).toBe(200);
    expect((await s.call('POST', '/api/v1/jobs/createTask', { key, body: IMAGE })).status).toBe(402);
    const days = await s.services.database.db
      .selectFrom('key_spend')
      .select(['starts_at', 'spent_micros'])
      .where('key_id', '=', keyId)
      .where('period', '=', 'day')
      .execute();
    expect(new Map(days.map((d) => [new Date(Number(d.starts_at)).toISOString().slice(0, 10), Number(d.spent_micros)]))).toEqual(
      new Map([
        ['2026-03-10', 0],
        ['2026-03-11', PRICE],
      ]),
    );
    const usage = (await admin(`/accounts/${a.id}/usage?from=2026-03-10&to=2026-03-11&group=day`)).body.data;
    expect(usage.rows.map((r: { day: string; spentMicros: number }) => [r.day, r.spentMicros])).toEqual([
      ['2026-03-10', PRICE],
      ['2026-03-11', 0],
    ]);
    const report = (await admin('/report?from=2026-03-10&to=2026-03-11')).body.data;
    expect(report.periods.map((p: { period: string; charges: string; refunds: { full: string } }) => [p.period, p.charges, p.refunds.full])).toEqual([
      ['2026-03-10', '-0.060000', '0.000000'],
      ['2026-03-11', '-0.060000', '0.060000'],
    ]);
    expect(report.reconciliation.reconciled).toBe(true);
    await expectMoneyInvariant(s, ADMIN);
  });
});

describe.each(dialects())('cancels racing engine failures on %s', (dialect) => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer(dialect, { ...FAST, ADMIN_TOKEN: ADMIN, LOCAL_GENERATE_MS: '5' });
    s.services.engine.start();
  });
  afterAll(() => s?.close());

  it("20 tasks of a day-budget key fail in the engine while two cancels each race it: one refund per task, the key's spend back to zero", async () => {
    const a = await s.account(2);
    const made = await s.call('POST', `/admin/v1/accounts/${a.id}/keys`, {
      body: { budget: { amount: '1.2', period: 'day' } },
      headers: { authorization: `Bearer ${ADMIN}` },
    });
    expect(made.status, JSON.stringify(made.body)).toBe(200);
    const key = made.body.data.apiKey as string;
    const ids = await Promise.all(Array.from({ length: 20 }, () => create(s, key, IMAGE.model, { ...IMAGE.input, prompt: 'a fox gengate:fail=501' })));
    const answers = await Promise.all(ids.flatMap((taskId) => [0, 1].map(() => s.call('POST', '/api/v1/jobs/cancel', { key, body: { taskId } }))));
    expect(answers.every((r) => r.status === 200 || r.status === 409)).toBe(true);
    for (const id of ids) {
      const t = await settle(s, key, id);
      expect([499, 501]).toContain(t.failCode);
      expect(await taskEntries(s, id)).toEqual({ charge: -PRICE, refund: PRICE });
    }
    const listed = (await s.call('GET', `/admin/v1/accounts/${a.id}/keys`, { headers: { authorization: `Bearer ${ADMIN}` } })).body.data as any[];
    expect(listed.find((k) => k.id === made.body.data.key.id)).toMatchObject({ spentMicros: 0, remaining: '1.2000' });
    expect(await s.services.accounts.balanceMicros(a.id)).toBe(2_000_000);
    await expectMoneyInvariant(s, ADMIN);
  });
});
