import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FEE_RETRY_DELAYS_MS, TopupFees } from '../../src/payments/index.js';
import { systemClock } from '../../src/clock.js';
import type { Stripe } from '../../src/payments/stripe.js';
import { dialects, freshDatabase } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { expectLedgerInvariant } from '../tasks/support.js';
import { SECRET_KEY, cardFee, completed, deliver, startFakeStripe, stripeSettings, type FakeBalance } from '../fakes/stripe.js';

const ADMIN = 'admin-token-for-fee-tests-0019';
const USD = 1_000_000;
const CENT = 10_000;

describe.each(dialects())("Stripe's fee of card top-ups (%s)", (dialect) => {
  let s: TestServer;
  let stripe: Awaited<ReturnType<typeof startFakeStripe>>;

  beforeAll(async () => {
    stripe = await startFakeStripe();
    s = await startServer(dialect, {
      ...stripeSettings(stripe),
      TOPUP_MIN: '5',
      TOPUP_MAX: '500',
      ADMIN_TOKEN: ADMIN,
    });
  });
  afterAll(async () => {
    await s?.close();
    await stripe?.close();
  });

  const fees = () => s.services.payments.fees!;
  const balance = (id: string) => s.services.accounts.balanceMicros(id);
  const topupRow = (id: string) => s.services.database.db.selectFrom('topups').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  /** A new account paying `usd` by card, its balance transaction set to `txn` (default: USD at Stripe's card price) before the payment is credited. */
  const paid = async (usd: string, txn?: FakeBalance) => {
    const a = await s.account(0);
    const r = await s.call('POST', '/api/v1/topups', { key: a.key, body: { amount: usd } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const session = stripe.session(r.body.data.sessionId);
    if (txn !== undefined) stripe.balance(session, txn);
    const credit = await deliver(s.url, completed(session));
    expect(credit.body.outcome).toBe('credited');
    await fees().idle(); // the try right after the credit runs in the background
    return { ...a, session, topupId: r.body.data.topupId as string };
  };
  const adminTopup = async (id: string) => {
    const r = await s.call('GET', '/admin/v1/topups', { headers: { authorization: `Bearer ${ADMIN}` } });
    expect(r.status).toBe(200);
    return r.body.data.topups.find((t: { id: string }) => t.id === id);
  };

  it('records the fee and net of a paid top-up from its charge’s balance transaction, right after the credit', async () => {
    const before = stripe.calls.length;
    const c = await paid('25');
    expect(await balance(c.id)).toBe(25 * USD); // the whole payment: the fee is not a movement of the balance
    const row = await topupRow(c.topupId);
    expect(Number(row.fee_micros)).toBe(cardFee(2500) * CENT); // 1.03 USD
    expect(Number(row.net_micros)).toBe((2500 - cardFee(2500)) * CENT);
    expect(row).toMatchObject({ fee_note: null, fee_due_at: null });
    expect(Number(row.fee_attempts)).toBe(1);
    // One read, Stripe's documented way: the payment intent with its latest charge's balance transaction expanded.
    const reads = stripe.calls.slice(before).filter((c) => c.method === 'GET');
    expect(reads).toHaveLength(1);
    expect(reads[0]!.path).toBe(`/v1/payment_intents/${c.session.paymentIntent}`);
    expect([...reads[0]!.query.values()]).toEqual(['latest_charge.balance_transaction']);
    expect(reads[0]!.headers.authorization).toBe(`Bearer ${SECRET_KEY}`);
    expect(await adminTopup(c.topupId)).toMatchObject({ paid: '25.0000', fee: '1.0300', net: '23.9700', feeNote: null });
    // Nothing is due any more: the retry does not ask again.
    const after = stripe.calls.length;
    await fees().retry(Date.now() + 30 * 86_400_000);
    expect(stripe.calls.slice(after).filter((x) => x.path.includes(c.session.paymentIntent))).toEqual([]);
  });

  it('Stripe down when the top-up is credited: the credit happens in full, the fee is filled later by the retry', async () => {
    stripe.failReads(1);
    const c = await paid('40');
    expect(await balance(c.id)).toBe(40 * USD);
    let row = await topupRow(c.topupId);
    expect(row.fee_micros).toBeNull();
    expect(row.fee_note).toContain('Stripe did not answer');
    expect(Number(row.fee_due_at)).toBeGreaterThan(Date.now() + FEE_RETRY_DELAYS_MS[0]! - 10_000);
    expect((await adminTopup(c.topupId)).fee).toBeNull();
    // Not due yet: the retry leaves it; once due, it fills the fee.
    await fees().retry();
    expect((await topupRow(c.topupId)).fee_micros).toBeNull();
    await fees().retry(Date.now() + FEE_RETRY_DELAYS_MS[0]! + 1_000);
    row = await topupRow(c.topupId);
    expect(Number(row.fee_micros)).toBe(cardFee(4000) * CENT);
    expect(Number(row.net_micros)).toBe((4000 - cardFee(4000)) * CENT);
    expect(row).toMatchObject({ fee_note: null, fee_due_at: null });
    expect(Number(row.fee_attempts)).toBe(2);
    expect(await balance(c.id)).toBe(40 * USD);
    await expectLedgerInvariant(s.services.database);
  });

  it('a balance transaction not available yet is left pending, said so, and filled when Stripe has it', async () => {
    const c = await paid('10', null);
    let row = await topupRow(c.topupId);
    expect(row.fee_micros).toBeNull();
    expect(row.fee_note).toBe('the balance transaction is not available yet');
    expect(await adminTopup(c.topupId)).toMatchObject({ fee: null, net: null, feeNote: 'the balance transaction is not available yet' });
    stripe.balance(c.session, { fee: 59, net: 941, currency: 'usd' });
    await fees().retry(Date.now() + FEE_RETRY_DELAYS_MS[0]! + 1_000);
    row = await topupRow(c.topupId);
    expect([Number(row.fee_micros), Number(row.net_micros), row.fee_note]).toEqual([59 * CENT, 941 * CENT, null]);
  });

  it('a fee Stripe reports in another currency is left pending for good, said so; nothing is converted', async () => {
    const c = await paid('20', { fee: 95, net: 1745, currency: 'eur' });
    const row = await topupRow(c.topupId);
    expect([row.fee_micros, row.net_micros, row.fee_due_at]).toEqual([null, null, null]);
    expect(row.fee_note).toBe('Stripe reports the fee in EUR, not USD');
    const before = stripe.calls.length;
    await fees().retry(Date.now() + 30 * 86_400_000);
    expect(stripe.calls.slice(before).filter((x) => x.path.includes(c.session.paymentIntent))).toEqual([]);
    expect(await balance(c.id)).toBe(20 * USD);
  });

  it('the retry is bounded: after the last try the fee stays pending, and nothing more is asked', async () => {
    stripe.failReads(1);
    const c = await paid('15');
    let at = Date.now();
    for (const delay of FEE_RETRY_DELAYS_MS) {
      at += delay + 1_000;
      stripe.failReads(1_000);
      await fees().retry(at);
    }
    stripe.failReads(0);
    const row = await topupRow(c.topupId);
    expect(Number(row.fee_attempts)).toBe(FEE_RETRY_DELAYS_MS.length + 1);
    expect(row.fee_due_at).toBeNull();
    expect(row.fee_note).toMatch(/^Stripe did not answer: .* \(given up after 10 tries\)$/);
    const before = stripe.calls.length;
    await fees().retry(at + 365 * 86_400_000);
    expect(stripe.calls.slice(before).filter((x) => x.path.includes(c.session.paymentIntent))).toEqual([]);
    expect(await balance(c.id)).toBe(15 * USD);
  });

  it('a top-up paid before the fee was recorded (no try yet, as after migration 020) is filled by the retry', async () => {
    const c = await paid('30');
    await s.services.database.tx((trx) =>
      trx
        .updateTable('topups')
        .set({ fee_micros: null, net_micros: null, fee_note: null, fee_attempts: 0, fee_due_at: null })
        .where('id', '=', c.topupId)
        .execute(),
    );
    expect(await fees().retry()).toBeGreaterThanOrEqual(1);
    const row = await topupRow(c.topupId);
    expect([Number(row.fee_micros), Number(row.fee_attempts), row.fee_due_at]).toEqual([cardFee(3000) * CENT, 1, null]);
  });

  it('concurrent retries never take the same try: each attempt is a compare-and-set', async () => {
    stripe.failReads(1);
    const c = await paid('12');
    const at = Date.now() + FEE_RETRY_DELAYS_MS[0]! + 1_000;
    const before = stripe.calls.length;
    await Promise.all([fees().retry(at), fees().retry(at), fees().retry(at)]);
    expect(stripe.calls.slice(before).filter((x) => x.path.includes(c.session.paymentIntent))).toHaveLength(1);
    expect(Number((await topupRow(c.topupId)).fee_micros)).toBe(cardFee(1200) * CENT);
  });
});

describe('a failed try right after a credit', () => {
  it('is reported to the log given by logTo, in a process that runs no retry (an API process)', async () => {
    const fresh = await freshDatabase('sqlite');
    await fresh.close(); // every read now fails
    // Stripe is never reached: the try fails at its first read.
    const fees = new TopupFees(fresh.database, systemClock, {} as Stripe);
    const warned: Array<{ obj: object; msg: string }> = [];
    fees.logTo({ warn: (obj, msg) => warned.push({ obj, msg }), error: () => {} });
    fees.afterCredit('tp_1');
    await fees.idle();
    expect(warned).toHaveLength(1);
    expect(warned[0]!.msg).toBe('stripe fees: the fee is left to the retry');
    expect(warned[0]!.obj).toMatchObject({ topupId: 'tp_1' });
  });
});
