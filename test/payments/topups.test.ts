import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { expectLedgerInvariant } from '../tasks/support.js';
import {
  SECRET_KEY,
  WEBHOOK_SECRET,
  completed,
  deliver,
  disputeClosed,
  disputeWon,
  disputed,
  expired,
  refunded,
  signed,
  startFakeStripe,
} from '../fakes/stripe.js';

const ADMIN = 'admin-token-for-topup-tests';
const USD = 1_000_000;

describe.each(dialects())('card top-ups through Stripe Checkout (%s)', (dialect) => {
  let s: TestServer;
  let stripe: Awaited<ReturnType<typeof startFakeStripe>>;

  beforeAll(async () => {
    stripe = await startFakeStripe();
    s = await startServer(dialect, {
      STRIPE_SECRET_KEY: SECRET_KEY,
      STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
      STRIPE_API_BASE: stripe.url,
      TOPUP_PRESETS: '10,25,100',
      TOPUP_MIN: '5',
      TOPUP_MAX: '500',
      ADMIN_TOKEN: ADMIN,
      PUBLIC_BASE_URL: 'https://gengate.example.com',
    });
  });
  afterAll(async () => {
    await s?.close();
    await stripe?.close();
  });

  const balance = (id: string) => s.services.accounts.balanceMicros(id);
  /** A new account with `usd` and a Checkout Session for `amount` started through the API. */
  const checkout = async (usd: number, amount: unknown = '25') => {
    const a = await s.account(usd);
    const r = await s.call('POST', '/api/v1/topups', { key: a.key, body: { amount } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return { ...a, topupId: r.body.data.topupId as string, session: stripe.session(r.body.data.sessionId) };
  };
  const topupRow = (id: string) => s.services.database.db.selectFrom('topups').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const ledger = (accountId: string) => s.services.ledger.entries(s.services.database.db, accountId);

  it('creates a Checkout Session for an amount in range and stores the top-up as pending', async () => {
    const a = await s.account(0);
    const r = await s.call('POST', '/api/v1/topups', { key: a.key, body: { amount: '12.50' } });
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({ topupId: expect.stringMatching(/^tu_/), sessionId: expect.stringMatching(/^cs_test_/) });
    expect(r.body.data.checkoutUrl).toBe(`${stripe.url}/pay/${r.body.data.sessionId}`);
    const call = stripe.calls.at(-1)!;
    expect(call.headers.authorization).toBe(`Bearer ${SECRET_KEY}`);
    expect(call.headers['idempotency-key']).toBe(`gengate-topup-${r.body.data.topupId}`);
    const form = stripe.session(r.body.data.sessionId).form;
    expect(Object.fromEntries(form)).toMatchObject({
      mode: 'payment',
      client_reference_id: r.body.data.topupId,
      'metadata[accountId]': a.id,
      'metadata[topupId]': r.body.data.topupId,
      'line_items[0][price_data][currency]': 'usd',
      'line_items[0][price_data][unit_amount]': '1250',
      'line_items[0][quantity]': '1',
      success_url: 'https://gengate.example.com/topup/success?session_id={CHECKOUT_SESSION_ID}',
      cancel_url: 'https://gengate.example.com/topup/cancel',
    });
    const row = await topupRow(r.body.data.topupId);
    expect(row).toMatchObject({ account_id: a.id, status: 'pending', session_id: r.body.data.sessionId });
    expect(Number(row.amount_micros)).toBe(12.5 * USD);
    const list = await s.call('GET', '/api/v1/topups', { key: a.key });
    expect(list.status).toBe(200);
    expect(list.body.data).toEqual([
      expect.objectContaining({ id: r.body.data.topupId, amount: '12.5000', status: 'pending', paid: '0.0000', unpaid: '0.0000', paidAt: null }),
    ]);
    expect(await balance(a.id)).toBe(0); // starting a checkout credits nothing
  });

  it('refuses amounts outside TOPUP_MIN..TOPUP_MAX, fractions of a cent and a missing amount, writing nothing', async () => {
    const a = await s.account(0);
    const before = stripe.calls.length;
    for (const [amount, status, text] of [
      ['4.99', 400, 'amount must be from 5 to 500 USD (got "4.99")'],
      [501, 400, 'amount must be from 5 to 500 USD (got 501)'],
      ['10.005', 400, 'amount must be a USD amount in whole cents from 5 to 500'],
      ['ten', 400, '(got "ten")'],
      [undefined, 422, 'amount is required; a USD amount from 5 to 500'],
    ] as const) {
      const r = await s.call('POST', '/api/v1/topups', { key: a.key, body: amount === undefined ? {} : { amount } });
      expect(r.status, String(amount)).toBe(status);
      expect(r.body.msg).toContain(text);
    }
    for (const preset of ['10', '25', '100', 5, 500])
      expect((await s.call('POST', '/api/v1/topups', { key: a.key, body: { amount: preset } })).status).toBe(200);
    expect(stripe.calls.length - before).toBe(5);
    const rows = await s.services.database.db.selectFrom('topups').select('amount_micros').where('account_id', '=', a.id).execute();
    expect(rows.map((r) => Number(r.amount_micros)).sort((x, y) => x - y)).toEqual([5, 10, 25, 100, 500].map((v) => v * USD));
  });

  it('needs the billing scope to start a top-up; balance:read lists them', async () => {
    const a = await s.account(0);
    const { apiKey } = await s.services.accounts.createKey(a.id, { scopes: ['balance:read'] });
    const r = await s.call('POST', '/api/v1/topups', { key: apiKey, body: { amount: '10' } });
    expect(r.status).toBe(403);
    expect(r.body.msg).toContain('billing');
    expect((await s.call('GET', '/api/v1/topups', { key: apiKey })).status).toBe(200);
    const { apiKey: billing } = await s.services.accounts.createKey(a.id, { scopes: ['billing'] });
    expect((await s.call('POST', '/api/v1/topups', { key: billing, body: { amount: '10' } })).status).toBe(200);
  });

  it('answers 503 when Stripe fails, keeping no top-up and charging nothing', async () => {
    const a = await s.account(0);
    stripe.failNext(3); // the client retries twice
    const r = await s.call('POST', '/api/v1/topups', { key: a.key, body: { amount: '10' } });
    expect(r.status).toBe(503);
    expect(r.body.msg).toContain('nothing was charged');
    expect(await s.services.database.db.selectFrom('topups').select('id').where('account_id', '=', a.id).execute()).toEqual([]);
  });

  it('credits the amount paid once from the signed completed event; a replayed event changes nothing', async () => {
    const c = await checkout(1, '25');
    const evt = completed(c.session);
    const first = await deliver(s.url, evt);
    expect(first).toMatchObject({ status: 200, body: { received: true, outcome: 'credited' } });
    expect(await balance(c.id)).toBe(26 * USD);
    for (let i = 0; i < 3; i++) expect((await deliver(s.url, evt)).body.outcome).toBe('already_credited');
    // Stripe may also send the same session's completion as a new event (another id).
    expect((await deliver(s.url, completed(c.session))).body.outcome).toBe('already_credited');
    expect(await balance(c.id)).toBe(26 * USD);
    const row = await topupRow(c.topupId);
    expect(row).toMatchObject({ status: 'paid', payment_intent: c.session.paymentIntent });
    expect(Number(row.paid_micros)).toBe(25 * USD);
    const topups = (await ledger(c.id)).filter((e) => e.kind === 'topup');
    expect(topups).toHaveLength(2); // the account's opening credit and this one
    expect(topups[1]).toMatchObject({ amountMicros: 25 * USD, balanceAfterMicros: 26 * USD });
    expect(topups[1]!.reason).toContain(c.session.id);
    await expectLedgerInvariant(s.services.database);
  });

  it('credits what was paid, not what was asked; an unpaid completion credits nothing', async () => {
    const c = await checkout(0, '25');
    expect((await deliver(s.url, completed(c.session, { paymentStatus: 'unpaid' }))).body.outcome).toBe('not_paid');
    expect(await balance(c.id)).toBe(0);
    expect((await deliver(s.url, completed(c.session, { amountCents: 2000 }))).body.outcome).toBe('credited');
    expect(await balance(c.id)).toBe(20 * USD);
  });

  it('the success and cancel pages credit nothing', async () => {
    const c = await checkout(0, '10');
    for (const path of [`/topup/success?session_id=${c.session.id}`, '/topup/cancel']) {
      const res = await fetch(s.url + path);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toContain('text/html');
    }
    expect(await balance(c.id)).toBe(0);
    expect((await topupRow(c.topupId)).status).toBe('pending');
  });

  it('refuses forged, altered, unsigned and stale deliveries with 400, writing nothing', async () => {
    const c = await checkout(0, '10');
    const evt = completed(c.session);
    const wrongSecret = signed(evt, { secret: 'whsec_notthesecretofthisendpoint000' });
    const good = signed(evt);
    const altered = { body: good.body.replace('"amount_total":1000', '"amount_total":100000'), signature: good.signature };
    const stale = signed(evt, { timestamp: Math.floor(Date.now() / 1000) - 3600 }); // a captured delivery replayed an hour later
    for (const delivery of [wrongSecret, altered, stale, { body: good.body, signature: '' }, { body: good.body, signature: 't=1,v1=00' }]) {
      const r = await deliver(s.url, delivery);
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject({ code: 400, error: 'invalid_signature' });
    }
    expect(await balance(c.id)).toBe(0);
    expect((await topupRow(c.topupId)).status).toBe('pending');
    expect((await deliver(s.url, good)).body.outcome).toBe('credited');
    expect(await balance(c.id)).toBe(10 * USD);
  });

  it('a late event (created long ago, delivered now) is still applied once', async () => {
    const c = await checkout(0, '10');
    const monthAgo = Math.floor(Date.now() / 1000) - 30 * 86400;
    const evt = completed(c.session, { created: monthAgo });
    expect((await deliver(s.url, evt)).body.outcome).toBe('credited');
    expect((await deliver(s.url, evt)).body.outcome).toBe('already_credited');
    expect((await deliver(s.url, refunded(c.session, 400, { created: monthAgo }))).body.outcome).toBe('reversal_applied');
    expect((await deliver(s.url, refunded(c.session, 400))).body.outcome).toBe('duplicate');
    expect(await balance(c.id)).toBe(6 * USD);
  });

  it('the same event delivered many times at once credits once', async () => {
    const c = await checkout(0, '100');
    const evt = signed(completed(c.session));
    const outcomes = await Promise.all(Array.from({ length: 12 }, () => deliver(s.url, evt)));
    expect(outcomes.map((o) => o.status)).toEqual(Array(12).fill(200));
    expect(outcomes.filter((o) => o.body.outcome === 'credited')).toHaveLength(1);
    expect(await balance(c.id)).toBe(100 * USD);
    await expectLedgerInvariant(s.services.database);
  });

  it('a completion and a refund of one payment arriving together, many times, end the same as one after the other', async () => {
    const c = await checkout(0, '30');
    const credit = signed(completed(c.session));
    const refund = signed(refunded(c.session, 1000));
    const outcomes = await Promise.all(Array.from({ length: 10 }, (_, i) => deliver(s.url, i % 2 ? refund : credit)));
    expect(outcomes.map((o) => o.status)).toEqual(Array(10).fill(200));
    expect(outcomes.filter((o) => o.body.outcome === 'credited')).toHaveLength(1);
    expect(outcomes.filter((o) => ['reversal_applied', 'reversal_waiting'].includes(o.body.outcome))).toHaveLength(1);
    expect(await balance(c.id)).toBe(20 * USD);
    expect((await ledger(c.id)).map((e) => [e.kind, e.amountMicros])).toEqual([
      ['topup', 30 * USD],
      ['adjustment', -10 * USD],
    ]);
    await expectLedgerInvariant(s.services.database);
  });

  it('a refund debits the account as an adjustment; its replays and older totals add nothing', async () => {
    const c = await checkout(0, '25');
    await deliver(s.url, completed(c.session));
    expect((await deliver(s.url, refunded(c.session, 500))).body.outcome).toBe('reversal_applied');
    expect(await balance(c.id)).toBe(20 * USD);
    const second = refunded(c.session, 1200); // the charge's refunded total is now 12 USD: 7 more
    expect((await deliver(s.url, second)).body.outcome).toBe('reversal_applied');
    expect((await deliver(s.url, second)).body.outcome).toBe('duplicate');
    expect((await deliver(s.url, refunded(c.session, 500))).body.outcome).toBe('duplicate'); // an older total, late
    expect(await balance(c.id)).toBe(13 * USD);
    const adjustments = (await ledger(c.id)).filter((e) => e.kind === 'adjustment');
    expect(adjustments.map((e) => e.amountMicros)).toEqual([-5 * USD, -7 * USD]);
    const [view] = (await s.call('GET', '/api/v1/topups', { key: c.key })).body.data;
    expect(view).toMatchObject({ status: 'paid', paid: '25.0000', refunded: '12.0000', unpaid: '0.0000' });
    await expectLedgerInvariant(s.services.database);
  });

  it('a refund larger than the balance takes it to zero and records the unpaid remainder for the operator', async () => {
    const c = await checkout(0, '50');
    await deliver(s.url, completed(c.session));
    // The customer spends 42 of the 50 (a charge), then the payment is refunded in full.
    await s.services.database.tx((trx) => s.services.ledger.charge(trx, c.id, 42 * USD, null, 'spent'));
    expect((await deliver(s.url, refunded(c.session, 5000))).body.outcome).toBe('reversal_applied');
    expect(await balance(c.id)).toBe(0);
    const admin = await s.call('GET', `/admin/v1/topups?accountId=${c.id}`, { headers: { authorization: `Bearer ${ADMIN}` } });
    expect(admin.status).toBe(200);
    expect(admin.body.data.unpaid).toBe('42.0000');
    expect(admin.body.data.topups[0]).toMatchObject({ id: c.topupId, accountId: c.id, refunded: '50.0000', unpaid: '42.0000' });
    expect(admin.body.data.topups[0].reversals).toEqual([
      expect.objectContaining({ kind: 'refund', amount: '50.0000', debited: '8.0000', unpaid: '42.0000', applied: true }),
    ]);
    // A debit with nothing left to take writes no ledger entry, only the remainder.
    const more = await checkout(0, '10');
    await deliver(s.url, completed(more.session));
    await s.services.database.tx((trx) => s.services.ledger.charge(trx, more.id, 10 * USD, null, 'spent'));
    await deliver(s.url, disputed(more.session, 1000));
    expect(await balance(more.id)).toBe(0);
    expect((await ledger(more.id)).filter((e) => e.kind === 'adjustment')).toEqual([]);
    expect((await s.call('GET', '/api/v1/topups', { key: more.key })).body.data[0]).toMatchObject({ disputed: '10.0000', unpaid: '10.0000' });
    await expectLedgerInvariant(s.services.database);
  });

  it('a dispute debits the disputed amount once', async () => {
    const c = await checkout(5, '20');
    await deliver(s.url, completed(c.session));
    const evt = disputed(c.session, 2000, 'dp_test_once');
    expect((await deliver(s.url, evt)).body.outcome).toBe('reversal_applied');
    expect((await deliver(s.url, evt)).body.outcome).toBe('duplicate');
    expect((await deliver(s.url, disputed(c.session, 2000, 'dp_test_once'))).body.outcome).toBe('duplicate'); // same dispute, another event
    expect(await balance(c.id)).toBe(5 * USD);
  });

  const adminTopups = async (accountId: string) => {
    const r = await s.call('GET', `/admin/v1/topups?accountId=${accountId}`, { headers: { authorization: `Bearer ${ADMIN}` } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body.data;
  };
  const entries = async (accountId: string) =>
    (
      await s.services.database.db
        .selectFrom('ledger_entries')
        .select(['kind', 'amount_micros', 'source'])
        .where('account_id', '=', accountId)
        .orderBy('id')
        .execute()
    ).map((e) => [e.kind, Number(e.amount_micros), e.source]);

  it('a won dispute credits back what it debited, once; replays, a new event id and the closed event add nothing', async () => {
    const c = await checkout(5, '20');
    await deliver(s.url, completed(c.session));
    expect((await deliver(s.url, disputed(c.session, 2000, 'dp_test_won'))).body.outcome).toBe('reversal_applied');
    expect(await balance(c.id)).toBe(5 * USD);
    const won = disputeWon(c.session, 2000, 'dp_test_won');
    expect((await deliver(s.url, won)).body.outcome).toBe('dispute_won');
    expect(await balance(c.id)).toBe(25 * USD);
    for (let i = 0; i < 2; i++) expect((await deliver(s.url, won)).body.outcome).toBe('duplicate');
    expect((await deliver(s.url, disputeWon(c.session, 2000, 'dp_test_won'))).body.outcome).toBe('duplicate'); // same dispute, another event
    expect((await deliver(s.url, disputeClosed(c.session, 2000, 'dp_test_won'))).body.outcome).toBe('ignored');
    expect((await deliver(s.url, disputed(c.session, 2000, 'dp_test_won'))).body.outcome).toBe('duplicate'); // its creation, again
    expect(await balance(c.id)).toBe(25 * USD);
    expect(await entries(c.id)).toEqual([
      ['topup', 5 * USD, null],
      ['topup', 20 * USD, 'card'],
      ['adjustment', -20 * USD, 'stripe_dispute'],
      ['adjustment', 20 * USD, 'stripe_dispute_won'],
    ]);
    const view = await adminTopups(c.id);
    expect(view.unpaid).toBe('0.0000');
    expect(view.topups[0]).toMatchObject({ disputed: '20.0000', disputesWon: '20.0000', unpaid: '0.0000' });
    expect(view.topups[0].reversals).toEqual([
      expect.objectContaining({ kind: 'dispute', amount: '20.0000', debited: '20.0000', unpaid: '0.0000', applied: true }),
      expect.objectContaining({ kind: 'dispute_won', amount: '20.0000', debited: '-20.0000', unpaid: '0.0000', applied: true }),
    ]);
    expect((await s.call('GET', '/api/v1/topups', { key: c.key })).body.data[0]).toMatchObject({ disputed: '20.0000', disputesWon: '20.0000' });
    await expectLedgerInvariant(s.services.database);
  });

  it('a won dispute that could take only part of its amount credits back that part and clears its unpaid remainder', async () => {
    const c = await checkout(0, '10');
    await deliver(s.url, completed(c.session));
    await s.services.database.tx((trx) => s.services.ledger.charge(trx, c.id, 8 * USD, null, 'spent'));
    expect((await deliver(s.url, disputed(c.session, 1000, 'dp_test_part'))).body.outcome).toBe('reversal_applied');
    expect(await balance(c.id)).toBe(0);
    expect((await adminTopups(c.id)).unpaid).toBe('8.0000');
    expect((await deliver(s.url, disputeWon(c.session, 1000, 'dp_test_part'))).body.outcome).toBe('dispute_won');
    expect(await balance(c.id)).toBe(2 * USD); // the 2 it took, not the 10 disputed
    const view = await adminTopups(c.id);
    expect(view.unpaid).toBe('0.0000');
    expect(view.topups[0]).toMatchObject({ disputed: '10.0000', disputesWon: '10.0000', unpaid: '0.0000' });
    expect(view.topups[0].reversals.at(-1)).toMatchObject({ kind: 'dispute_won', debited: '-2.0000', unpaid: '-8.0000' });
    expect((await entries(c.id)).filter((e) => e[2] === 'stripe_dispute_won')).toEqual([['adjustment', 2 * USD, 'stripe_dispute_won']]);
    // A dispute that took nothing (the balance was spent) gives nothing back, but clears its remainder.
    const more = await checkout(0, '10');
    await deliver(s.url, completed(more.session));
    await s.services.database.tx((trx) => s.services.ledger.charge(trx, more.id, 10 * USD, null, 'spent'));
    await deliver(s.url, disputed(more.session, 1000, 'dp_test_none'));
    expect((await deliver(s.url, disputeWon(more.session, 1000, 'dp_test_none'))).body.outcome).toBe('dispute_won');
    expect(await balance(more.id)).toBe(0);
    expect((await entries(more.id)).filter((e) => e[0] === 'adjustment')).toEqual([]);
    expect((await adminTopups(more.id)).unpaid).toBe('0.0000');
    await expectLedgerInvariant(s.services.database);
  });

  it('a dispute won while it waits for its top-up is cancelled: the credit is whole and nothing is debited', async () => {
    const c = await checkout(0, '30');
    expect((await deliver(s.url, disputed(c.session, 3000, 'dp_test_wait'))).body.outcome).toBe('reversal_waiting');
    expect((await deliver(s.url, disputeWon(c.session, 3000, 'dp_test_wait'))).body.outcome).toBe('dispute_cancelled');
    const all = await s.call('GET', '/admin/v1/topups', { headers: { authorization: `Bearer ${ADMIN}` } });
    expect(all.body.data.waiting.filter((r: { paymentIntent: string }) => r.paymentIntent === c.session.paymentIntent)).toEqual([]);
    expect((await deliver(s.url, completed(c.session))).body.outcome).toBe('credited');
    expect(await balance(c.id)).toBe(30 * USD);
    expect(await entries(c.id)).toEqual([['topup', 30 * USD, 'card']]);
    expect((await adminTopups(c.id)).topups[0]).toMatchObject({ disputed: '30.0000', disputesWon: '30.0000', unpaid: '0.0000' });
    expect((await deliver(s.url, disputeWon(c.session, 3000, 'dp_test_wait'))).body.outcome).toBe('duplicate');
    await expectLedgerInvariant(s.services.database);
  });

  it('a win that arrives before its dispute credits nothing, and the dispute, when it comes, debits nothing', async () => {
    const c = await checkout(0, '15');
    await deliver(s.url, completed(c.session));
    expect((await deliver(s.url, disputeWon(c.session, 1500, 'dp_test_early'))).body.outcome).toBe('dispute_won_early');
    expect(await balance(c.id)).toBe(15 * USD);
    expect((await deliver(s.url, disputed(c.session, 1500, 'dp_test_early'))).body.outcome).toBe('dispute_cancelled');
    expect((await deliver(s.url, disputed(c.session, 1500, 'dp_test_early'))).body.outcome).toBe('duplicate');
    expect((await deliver(s.url, disputeWon(c.session, 1500, 'dp_test_early'))).body.outcome).toBe('duplicate');
    expect(await balance(c.id)).toBe(15 * USD);
    expect(await entries(c.id)).toEqual([['topup', 15 * USD, 'card']]);
    expect((await adminTopups(c.id)).topups[0]).toMatchObject({ disputed: '15.0000', disputesWon: '15.0000', unpaid: '0.0000' });
    // Before the top-up's credit too: the credit is whole.
    const early = await checkout(0, '10');
    expect((await deliver(s.url, disputeWon(early.session, 1000, 'dp_test_earlier'))).body.outcome).toBe('dispute_won_early');
    expect((await deliver(s.url, disputed(early.session, 1000, 'dp_test_earlier'))).body.outcome).toBe('dispute_cancelled');
    expect((await deliver(s.url, completed(early.session))).body.outcome).toBe('credited');
    expect(await balance(early.id)).toBe(10 * USD);
    expect((await adminTopups(early.id)).topups[0]).toMatchObject({ disputed: '10.0000', disputesWon: '10.0000', unpaid: '0.0000' });
    await expectLedgerInvariant(s.services.database);
  });

  it('funds reinstated for a dispute that is not won credit nothing', async () => {
    const c = await checkout(0, '10');
    await deliver(s.url, completed(c.session));
    await deliver(s.url, disputed(c.session, 1000, 'dp_test_lost'));
    expect((await deliver(s.url, disputeWon(c.session, 1000, 'dp_test_lost', { status: 'lost' }))).body.outcome).toBe('dispute_not_won');
    expect((await deliver(s.url, disputeClosed(c.session, 1000, 'dp_test_lost', 'lost'))).body.outcome).toBe('ignored');
    expect(await balance(c.id)).toBe(0);
  });

  it('a win delivered many times at once, and together with its dispute in either order, credits back once', async () => {
    const c = await checkout(0, '40');
    await deliver(s.url, completed(c.session));
    await deliver(s.url, disputed(c.session, 4000, 'dp_test_many'));
    const won = signed(disputeWon(c.session, 4000, 'dp_test_many'));
    const again = signed(disputeWon(c.session, 4000, 'dp_test_many'));
    const outcomes = await Promise.all(Array.from({ length: 12 }, (_, i) => deliver(s.url, i % 3 ? won : again)));
    expect(outcomes.map((o) => o.status)).toEqual(Array(12).fill(200));
    expect(outcomes.filter((o) => o.body.outcome === 'dispute_won')).toHaveLength(1);
    expect(outcomes.filter((o) => o.body.outcome !== 'dispute_won')).toHaveLength(11);
    expect(await balance(c.id)).toBe(40 * USD);
    // A dispute and its win arriving at once: whichever is handled first, the balance ends where it began.
    const d = await checkout(0, '25');
    await deliver(s.url, completed(d.session));
    const created = signed(disputed(d.session, 2500, 'dp_test_race'));
    const reinstated = signed(disputeWon(d.session, 2500, 'dp_test_race'));
    const raced = await Promise.all(Array.from({ length: 10 }, (_, i) => deliver(s.url, i % 2 ? created : reinstated)));
    expect(raced.map((o) => o.status)).toEqual(Array(10).fill(200));
    const named = raced.map((o) => o.body.outcome as string).filter((o) => o !== 'duplicate');
    expect([
      ['dispute_won', 'reversal_applied'],
      ['dispute_cancelled', 'dispute_won_early'],
    ]).toContainEqual(named.sort());
    expect(await balance(d.id)).toBe(25 * USD);
    const moved = (await entries(d.id)).filter((e) => e[0] === 'adjustment');
    expect(moved.reduce((sum, e) => sum + Number(e[1]), 0)).toBe(0);
    await expectLedgerInvariant(s.services.database);
  });

  it('a refund that arrives before the completion waits and is applied with the credit', async () => {
    const c = await checkout(0, '30');
    expect((await deliver(s.url, refunded(c.session, 1000))).body.outcome).toBe('reversal_waiting');
    expect(await balance(c.id)).toBe(0);
    const waiting = await s.call('GET', '/admin/v1/topups', { headers: { authorization: `Bearer ${ADMIN}` } });
    expect(waiting.body.data.waiting).toEqual(expect.arrayContaining([expect.objectContaining({ paymentIntent: c.session.paymentIntent, applied: false })]));
    expect((await deliver(s.url, completed(c.session))).body.outcome).toBe('credited');
    expect(await balance(c.id)).toBe(20 * USD);
    expect((await deliver(s.url, refunded(c.session, 1000))).body.outcome).toBe('duplicate');
    expect(await balance(c.id)).toBe(20 * USD);
    expect((await ledger(c.id)).map((e) => [e.kind, e.amountMicros])).toEqual([
      ['topup', 30 * USD],
      ['adjustment', -10 * USD],
    ]);
    await expectLedgerInvariant(s.services.database);
  });

  it('an expired checkout shows as expired and credits nothing; an expiry after the payment changes nothing', async () => {
    const c = await checkout(0, '10');
    expect((await deliver(s.url, expired(c.session))).body.outcome).toBe('expired');
    expect((await s.call('GET', '/api/v1/topups', { key: c.key })).body.data[0]).toMatchObject({ status: 'expired', paid: '0.0000' });
    expect(await balance(c.id)).toBe(0);
    // Had the completion been overtaken by the expiry, the payer still gets the credit.
    expect((await deliver(s.url, completed(c.session))).body.outcome).toBe('credited');
    expect((await deliver(s.url, expired(c.session))).body.outcome).toBe('ignored');
    expect((await s.call('GET', '/api/v1/topups', { key: c.key })).body.data[0]).toMatchObject({ status: 'paid', paid: '10.0000' });
    expect(await balance(c.id)).toBe(10 * USD);
  });

  it('the OpenAPI document shows the payment operations, the webhook included', async () => {
    const doc = (await s.call('GET', '/openapi.json')).body;
    expect(doc.paths['/api/v1/topups'].post).toMatchObject({ operationId: 'createTopup', tags: ['Payments'] });
    expect(doc.paths['/api/v1/topups'].get).toMatchObject({ operationId: 'listTopups', tags: ['Payments'] });
    expect(doc.paths['/stripe/webhook'].post).toMatchObject({ operationId: 'stripeWebhook', tags: ['Payments'] });
    expect(doc.paths['/admin/v1/topups'].get).toMatchObject({ operationId: 'adminListTopups' });
  });

  it('ignores events about sessions and charges it did not create, and event types it does not handle', async () => {
    const other = { ...stripe.session((await checkout(0, '10')).session.id), id: 'cs_test_not_ours', clientReferenceId: 'tu_nope' };
    expect((await deliver(s.url, completed(other))).body.outcome).toBe('unknown_session');
    expect((await deliver(s.url, { ...completed(other), type: 'customer.created' })).body.outcome).toBe('ignored');
  });
});

describe.each(dialects())('top-ups without Stripe (%s)', (dialect) => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer(dialect, { PUBLIC_BASE_URL: 'https://gengate.example.com', CONSOLE_DIR: fakeConsole() });
  });
  afterAll(() => s?.close());

  it("the top-up page is the console's, told that card payments are off; starting a top-up is 404 naming why; no webhook", async () => {
    const res = await fetch(`${s.url}/topup`);
    expect(res.status).toBe(200);
    expect(topupSettings(await res.text())).toMatchObject({ enabled: false });
    const a = await s.account(0);
    const r = await s.call('POST', '/api/v1/topups', { key: a.key, body: { amount: '10' } });
    expect(r.status).toBe(404);
    expect(r.body.msg).toContain('card top-ups are not enabled on this server');
    expect((await s.call('POST', '/stripe/webhook', { body: '{}' })).status).toBe(404);
  });

  it("the 402 answer's topUpUrl is the top-up page", async () => {
    const a = await s.account(0);
    const r = await s.call('POST', '/api/v1/jobs/createTask', { key: a.key, body: { model: 'seedream-flash', input: { prompt: 'a cat' } } });
    expect(r.status).toBe(402);
    expect(r.body.data).toMatchObject({ balance: '0.0000', currency: 'USD', topUpUrl: 'https://gengate.example.com/topup' });
    expect(r.body.msg).toContain('https://gengate.example.com/topup');
  });
});

/** A stand-in console build (CONSOLE_DIR): just the page with its settings tag, which the server fills in. */
function fakeConsole(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'gengate-fake-console-'));
  writeFileSync(path.join(dir, 'index.html'), '<!doctype html><meta name="gengate-settings" content="{}" /><div id="app"></div>');
  return dir;
}

/** The top-up facts the server wrote into the console page's settings tag. */
function topupSettings(html: string): unknown {
  const content = /name="gengate-settings" content="([^"]*)"/
    .exec(html)![1]!
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, '&');
  return (JSON.parse(content) as { topups: unknown }).topups;
}

describe('top-up settings', () => {
  it("TOPUP_URL replaces the page in the 402 answer; the console's top-up page is given the amounts; the return pages stay", async () => {
    const s = await startServer('sqlite', {
      TOPUP_URL: 'https://pay.example.com/gengate',
      STRIPE_SECRET_KEY: SECRET_KEY,
      STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
      CONSOLE_DIR: fakeConsole(),
    });
    try {
      const a = await s.account(0);
      const r = await s.call('POST', '/api/v1/jobs/createTask', { key: a.key, body: { model: 'seedream-flash', input: { prompt: 'a cat' } } });
      expect(r.body.data.topUpUrl).toBe('https://pay.example.com/gengate');
      const page = await (await fetch(`${s.url}/topup`)).text();
      expect(topupSettings(page)).toEqual({ enabled: true, presets: [10_000_000, 25_000_000, 100_000_000], min: 5_000_000, max: 1_000_000_000 });
      expect((await fetch(`${s.url}/topup/success?session_id=cs_x`)).status).toBe(200);
      expect(await (await fetch(`${s.url}/topup/cancel`)).text()).toContain('https://pay.example.com/gengate');
    } finally {
      await s.close();
    }
  });

  it('refuses STRIPE_SECRET_KEY without STRIPE_WEBHOOK_SECRET, presets out of range and MIN above MAX', async () => {
    const { loadConfig } = await import('../../src/config.js');
    expect(() => loadConfig({ STRIPE_SECRET_KEY: SECRET_KEY })).toThrow(/STRIPE_WEBHOOK_SECRET: is required when STRIPE_SECRET_KEY is set/);
    expect(() => loadConfig({ TOPUP_PRESETS: '1,10', TOPUP_MIN: '5' })).toThrow(/TOPUP_PRESETS: every preset must lie from TOPUP_MIN to TOPUP_MAX/);
    expect(() => loadConfig({ TOPUP_MIN: '50', TOPUP_MAX: '20', TOPUP_PRESETS: '30' })).toThrow(/TOPUP_MAX: must be at least TOPUP_MIN/);
    expect(() => loadConfig({ TOPUP_PRESETS: '10,abc' })).toThrow(/TOPUP_PRESETS: must be comma-separated USD amounts/);
  });
});
