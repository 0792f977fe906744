import Stripe from 'stripe';
import { expect } from 'vitest';
import type { TestServer } from '../helpers/server.js';
import { startFake } from './base.js';

/** The webhook signing secret the tests give GenGate (STRIPE_WEBHOOK_SECRET). */
export const WEBHOOK_SECRET = 'whsec_testsecretforgengate0000000000';
export const SECRET_KEY = 'sk_test_gengatefake000000000000';

/** The settings that point a test server's card top-ups at a fake Stripe. */
export const stripeSettings = (stripe: { url: string }) => ({
  STRIPE_SECRET_KEY: SECRET_KEY,
  STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
  STRIPE_API_BASE: stripe.url,
});

/** A Checkout Session as the fake keeps it. */
export interface FakeSession {
  id: string;
  amountCents: number;
  clientReferenceId: string | null;
  metadata: Record<string, string>;
  paymentIntent: string;
  chargeId: string;
  form: URLSearchParams;
}

/** The balance transaction of a session's charge: Stripe's fee and net in `currency`'s smallest unit; null while not available yet. */
export type FakeBalance = { fee: number; net: number; currency: string } | null;

/** Stripe's standard card price, 2.9% + 30 cents: the fake's fee unless a test sets another. */
export const cardFee = (cents: number) => Math.round(cents * 0.029) + 30;

// Only used for its webhook helpers (signing test events); it never calls anything.
const signer = new Stripe(SECRET_KEY);

/**
 * The part of Stripe's API GenGate calls: POST /v1/checkout/sessions (form-encoded, as the `stripe`
 * package sends it), and the reads of a payment's fee as Stripe documents them: GET
 * /v1/payment_intents/:id (`latest_charge`), /v1/charges/:id (`balance_transaction`) and
 * /v1/balance_transactions/:id (`fee`, `net`, `currency`), each expanding what `expand[]` names
 * (`latest_charge.balance_transaction` in one call). Sessions are kept so a test can make the events
 * Stripe would send about them, signed with the package's own test-header helper. `failNext`
 * answers the next creations 500, `failReads` the next reads; `balance` sets a charge's balance
 * transaction (another currency, or not available yet); by default it is USD at `cardFee`.
 */
export async function startFakeStripe() {
  const sessions = new Map<string, FakeSession>();
  const balances = new Map<string, FakeBalance>();
  let n = 0;
  let failing = 0;
  let failingReads = 0;
  const byIntent = (id: string) => [...sessions.values()].find((s) => s.paymentIntent === id);
  const byCharge = (id: string) => [...sessions.values()].find((s) => s.chargeId === id);
  const txnId = (s: FakeSession) => `txn_${s.chargeId}`;
  const balanceOf = (s: FakeSession): FakeBalance =>
    balances.has(s.id) ? balances.get(s.id)! : { fee: cardFee(s.amountCents), net: s.amountCents - cardFee(s.amountCents), currency: 'usd' };
  const txnObject = (s: FakeSession, b: NonNullable<FakeBalance>) => ({
    id: txnId(s),
    object: 'balance_transaction',
    amount: b.fee + b.net,
    currency: b.currency,
    fee: b.fee,
    fee_details: [{ amount: b.fee, currency: b.currency, description: 'Stripe processing fees', type: 'stripe_fee', application: null }],
    net: b.net,
    source: s.chargeId,
    status: 'pending',
    type: 'charge',
    reporting_category: 'charge',
  });
  const chargeObject = (s: FakeSession, expand: string[]) => {
    const b = balanceOf(s);
    return {
      id: s.chargeId,
      object: 'charge',
      amount: s.amountCents,
      currency: 'usd',
      paid: true,
      status: 'succeeded',
      payment_intent: s.paymentIntent,
      balance_transaction: b === null ? null : expand.includes('balance_transaction') ? txnObject(s, b) : txnId(s),
    };
  };
  const notFound = (what: string) => ({
    status: 404,
    json: { error: { type: 'invalid_request_error', code: 'resource_missing', message: `No such ${what}` } },
  });
  const fake = await startFake((call, base) => {
    if (call.method === 'GET' && /^\/v1\/(payment_intents|charges|balance_transactions)\//.test(call.path)) {
      if (failingReads > 0) {
        failingReads--;
        return { status: 500, json: { error: { type: 'api_error', message: 'fake Stripe is down' } } };
      }
      if (call.headers.authorization !== `Bearer ${SECRET_KEY}`) return { status: 401, json: { error: { type: 'invalid_request_error', message: 'bad key' } } };
      const expand = [...call.query].filter(([k]) => /^expand\[\d*\]$/.test(k)).map(([, v]) => v);
      const [, kind, id] = call.path.split('/').slice(1);
      if (kind === 'payment_intents') {
        const s = byIntent(id!);
        if (!s) return notFound(`payment_intent: '${id}'`);
        const nested = expand.filter((e) => e.startsWith('latest_charge.')).map((e) => e.slice('latest_charge.'.length));
        const latest = expand.includes('latest_charge') || nested.length > 0 ? chargeObject(s, nested) : s.chargeId;
        return {
          status: 200,
          json: { id: s.paymentIntent, object: 'payment_intent', amount: s.amountCents, currency: 'usd', status: 'succeeded', latest_charge: latest },
        };
      }
      if (kind === 'charges') {
        const s = byCharge(id!);
        return s ? { status: 200, json: chargeObject(s, expand) } : notFound(`charge: '${id}'`);
      }
      const s = [...sessions.values()].find((x) => txnId(x) === id);
      const b = s && balanceOf(s);
      return s && b ? { status: 200, json: txnObject(s, b) } : notFound(`balance_transaction: '${id}'`);
    }
    if (call.method === 'POST' && call.path === '/v1/checkout/sessions') {
      if (failing > 0) {
        failing--;
        return { status: 500, json: { error: { type: 'api_error', message: 'fake Stripe is down' } } };
      }
      if (call.headers.authorization !== `Bearer ${SECRET_KEY}`) return { status: 401, json: { error: { type: 'invalid_request_error', message: 'bad key' } } };
      const form = new URLSearchParams(call.text);
      n++;
      const id = `cs_test_${n}_${Math.random().toString(36).slice(2, 10)}`;
      const amountCents = Number(form.get('line_items[0][price_data][unit_amount]')) * Number(form.get('line_items[0][quantity]'));
      const metadata: Record<string, string> = {};
      for (const [k, v] of form) {
        const m = /^metadata\[(.+)\]$/.exec(k);
        if (m) metadata[m[1]!] = v;
      }
      const session: FakeSession = {
        id,
        amountCents,
        clientReferenceId: form.get('client_reference_id'),
        metadata,
        paymentIntent: `pi_test_${n}`,
        chargeId: `ch_test_${n}`,
        form,
      };
      sessions.set(id, session);
      return { status: 200, json: { ...sessionObject(session, 'unpaid'), payment_intent: null, url: `${base}/pay/${id}` } };
    }
    return { status: 404, json: { error: { type: 'invalid_request_error', message: `no route ${call.method} ${call.path}` } } };
  });
  return {
    ...fake,
    sessions,
    failNext(times = 1) {
      failing = times;
    },
    /** Answers the next `times` reads of payment intents, charges and balance transactions 500 (Stripe down). */
    failReads(times = 1) {
      failingReads = times;
    },
    /** Sets the balance transaction of the session's charge: null while not available yet. */
    balance(session: FakeSession, b: FakeBalance) {
      balances.set(session.id, b);
    },
    session(id: string): FakeSession {
      const s = sessions.get(id);
      if (!s) throw new Error(`no session ${id}`);
      return s;
    },
  };
}

let eventSeq = 0;

/** A Stripe event around `object`; `created` in seconds (a late event is an old one delivered now). */
export function event(type: string, object: Record<string, unknown>, opts: { id?: string; created?: number } = {}): Record<string, unknown> {
  return {
    id: opts.id ?? `evt_test_${++eventSeq}_${Math.random().toString(36).slice(2, 8)}`,
    object: 'event',
    api_version: '2025-01-01',
    created: opts.created ?? Math.floor(Date.now() / 1000),
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type,
    data: { object },
  };
}

export function sessionObject(s: FakeSession, paymentStatus: 'paid' | 'unpaid', amountCents = s.amountCents) {
  return {
    id: s.id,
    object: 'checkout.session',
    mode: 'payment',
    status: paymentStatus === 'paid' ? 'complete' : 'open',
    payment_status: paymentStatus,
    amount_total: amountCents,
    amount_subtotal: amountCents,
    currency: 'usd',
    client_reference_id: s.clientReferenceId,
    metadata: s.metadata,
    payment_intent: s.paymentIntent,
  };
}

export const completed = (s: FakeSession, opts: { paymentStatus?: 'paid' | 'unpaid'; amountCents?: number; id?: string; created?: number } = {}) =>
  event('checkout.session.completed', sessionObject(s, opts.paymentStatus ?? 'paid', opts.amountCents), opts);

/** charge.refunded: `refundedCents` is the charge's refunded total so far, as Stripe sends it. */
export const refunded = (s: FakeSession, refundedCents: number, opts: { id?: string; created?: number } = {}) =>
  event(
    'charge.refunded',
    {
      id: s.chargeId,
      object: 'charge',
      amount: s.amountCents,
      amount_refunded: refundedCents,
      refunded: refundedCents >= s.amountCents,
      currency: 'usd',
      payment_intent: s.paymentIntent,
      metadata: {},
    },
    opts,
  );

/** A dispute of the session's charge as Stripe sends it in its events. */
const disputeObject = (s: FakeSession, cents: number, disputeId: string, status: string) => ({
  id: disputeId,
  object: 'dispute',
  amount: cents,
  currency: 'usd',
  charge: s.chargeId,
  payment_intent: s.paymentIntent,
  status,
  reason: 'fraudulent',
});

export const disputed = (s: FakeSession, cents: number, disputeId = `dp_test_${Math.random().toString(36).slice(2, 10)}`, opts: { id?: string } = {}) =>
  event('charge.dispute.created', disputeObject(s, cents, disputeId, 'needs_response'), opts);

/** charge.dispute.funds_reinstated: the money of the dispute came back (`status` won, unless a test says otherwise). */
export const disputeWon = (s: FakeSession, cents: number, disputeId: string, opts: { id?: string; status?: string } = {}) =>
  event('charge.dispute.funds_reinstated', disputeObject(s, cents, disputeId, opts.status ?? 'won'), opts);

/** charge.dispute.closed: the dispute's final status, which moves no money by itself. */
export const disputeClosed = (s: FakeSession, cents: number, disputeId: string, status = 'won') =>
  event('charge.dispute.closed', disputeObject(s, cents, disputeId, status));

/** The body and Stripe-Signature header of a delivery, signed with stripe.webhooks.generateTestHeaderString. */
export function signed(evt: Record<string, unknown>, opts: { secret?: string; timestamp?: number } = {}): { body: string; signature: string } {
  const body = JSON.stringify(evt);
  const signature = signer.webhooks.generateTestHeaderString({ payload: body, secret: opts.secret ?? WEBHOOK_SECRET, timestamp: opts.timestamp });
  return { body, signature };
}

/** Delivers an event to a GenGate webhook endpoint as Stripe would. */
export async function deliver(baseUrl: string, evt: Record<string, unknown> | { body: string; signature: string }): Promise<{ status: number; body: any }> {
  const { body, signature } = 'signature' in evt && 'body' in evt ? (evt as { body: string; signature: string }) : signed(evt);
  const res = await fetch(`${baseUrl}/stripe/webhook`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json; charset=utf-8',
      'stripe-signature': signature,
      'user-agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)',
    },
    body,
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    /* keep text */
  }
  return { status: res.status, body: parsed };
}

/** checkout.session.expired: the payer never paid within the session's lifetime. */
export const expired = (s: FakeSession) => event('checkout.session.expired', { ...sessionObject(s, 'unpaid'), status: 'expired', payment_intent: null });

/** A new account of `s` (no balance) credited `usd` by a card top-up paid in `stripe`: its id, key and Checkout session. */
export async function cardTopUp(s: TestServer, stripe: Awaited<ReturnType<typeof startFakeStripe>>, usd: string) {
  const c = await s.account(0);
  const r = await s.call('POST', '/api/v1/topups', { key: c.key, body: { amount: usd } });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  const session = stripe.session(r.body.data.sessionId);
  expect((await deliver(s.url, completed(session))).body.outcome).toBe('credited');
  return { ...c, session };
}
