import type { Clock } from '../clock.js';
import { formatUsd } from '../billing/index.js';
import { Errors } from '../errors.js';
import { randomId } from '../ids.js';
import type { Database, TopupReversalsTable, TopupsTable } from '../store/index.js';
import { MICROS_PER_CENT, type TopupAmounts } from './amounts.js';
import type { Stripe } from './stripe.js';

/** The most top-ups one list answer holds, newest first. */
export const LIST_LIMIT = 100;

/** A Checkout Session to pay. */
export interface Checkout {
  topupId: string;
  sessionId: string;
  checkoutUrl: string;
}

/** A reversal as the operator sees it. */
export interface ReversalView {
  id: string;
  kind: TopupReversalsTable['kind'];
  amount: string;
  debited: string;
  unpaid: string;
  applied: boolean;
  paymentIntent: string;
  topupId: string | null;
  eventId: string;
  createdAt: string;
}

/** A top-up as its account sees it; the operator's view adds the account, the payment intent and the reversals. */
export interface TopupView {
  id: string;
  amount: string;
  currency: 'USD';
  status: TopupsTable['status'];
  paid: string;
  refunded: string;
  disputed: string;
  /** Won disputes: their amount came back (what they had debited was credited back). */
  disputesWon: string;
  unpaid: string;
  sessionId: string | null;
  createdAt: string;
  paidAt: string | null;
}

/** Stripe's fee of a paid top-up as the operator sees it: null while not known, with the reason in `feeNote`. */
export interface TopupFeeView {
  fee: string | null;
  /** What Stripe pays out for the payment: paid less the fee. */
  net: string | null;
  feeNote: string | null;
}

export type AdminTopupView = TopupView & TopupFeeView & { accountId: string; paymentIntent: string | null; reversals: ReversalView[] };

const usd = (micros: number) => formatUsd(micros, 4);
const iso = (ms: number | null) => (ms == null ? null : new Date(Number(ms)).toISOString());

export function reversalView(r: TopupReversalsTable): ReversalView {
  return {
    id: r.id,
    kind: r.kind,
    amount: usd(Number(r.amount_micros)),
    debited: usd(Number(r.debited_micros)),
    unpaid: usd(Number(r.unpaid_micros)),
    applied: Number(r.applied) === 1,
    paymentIntent: r.payment_intent,
    topupId: r.topup_id,
    eventId: r.event_id,
    createdAt: iso(Number(r.created_at))!,
  };
}

function topupView(t: TopupsTable, reversals: TopupReversalsTable[]): TopupView {
  const sum = (pick: (r: TopupReversalsTable) => boolean, field: 'amount_micros' | 'unpaid_micros') =>
    reversals.filter(pick).reduce((s, r) => s + Number(r[field]), 0);
  return {
    id: t.id,
    amount: usd(Number(t.amount_micros)),
    currency: 'USD',
    status: t.status,
    paid: usd(Number(t.paid_micros)),
    refunded: usd(sum((r) => r.kind === 'refund', 'amount_micros')),
    disputed: usd(sum((r) => r.kind === 'dispute', 'amount_micros')),
    disputesWon: usd(sum((r) => r.kind === 'dispute_won', 'amount_micros')),
    unpaid: usd(sum(() => true, 'unpaid_micros')),
    sessionId: t.session_id,
    createdAt: iso(Number(t.created_at))!,
    paidAt: iso(t.paid_at),
  };
}

/** Where the Checkout pages send the payer back to (GenGate's pages; they never credit anything). */
export interface ReturnPages {
  successUrl: string;
  cancelUrl: string;
}

/**
 * Card top-ups (DECISIONS §22, decision 1904): starts Checkout Sessions and lists top-ups. The
 * account is credited only by the signed webhook (`events.ts`), never here.
 */
export class Topups {
  constructor(
    private readonly database: Database,
    private readonly clock: Clock,
    private readonly stripe: Stripe | null,
    readonly amounts: TopupAmounts,
    private readonly pages: ReturnPages,
  ) {}

  /** Whether card top-ups are on (STRIPE_SECRET_KEY is set). */
  get enabled(): boolean {
    return this.stripe !== null;
  }

  /** Stores a pending top-up, then asks Stripe for its Checkout Session (outside any transaction). */
  async start(accountId: string, amountMicros: number): Promise<Checkout> {
    const stripe = this.stripe;
    if (!stripe) throw Errors.notFound('card top-ups are not enabled on this server (STRIPE_SECRET_KEY is not set); ask the operator to top up your account');
    const topupId = randomId('tu_');
    const row: TopupsTable = {
      id: topupId,
      account_id: accountId,
      amount_micros: amountMicros,
      status: 'pending',
      session_id: null,
      payment_intent: null,
      paid_micros: 0,
      created_at: this.clock.now(),
      paid_at: null,
      fee_micros: null,
      net_micros: null,
      fee_note: null,
      fee_attempts: 0,
      fee_due_at: null,
    };
    await this.database.tx((trx) => trx.insertInto('topups').values(row).execute(), { atomic: false });
    let session: Stripe.Checkout.Session;
    try {
      session = await stripe.checkout.sessions.create(
        {
          mode: 'payment',
          client_reference_id: topupId,
          metadata: { accountId, topupId },
          payment_intent_data: { metadata: { accountId, topupId } },
          line_items: [
            {
              quantity: 1,
              price_data: { currency: 'usd', unit_amount: amountMicros / MICROS_PER_CENT, product_data: { name: 'GenGate balance top-up' } },
            },
          ],
          success_url: `${this.pages.successUrl}?session_id={CHECKOUT_SESSION_ID}`,
          cancel_url: this.pages.cancelUrl,
        },
        { idempotencyKey: `gengate-topup-${topupId}` },
      );
    } catch (e) {
      await this.database.tx((trx) => trx.deleteFrom('topups').where('id', '=', topupId).execute(), { atomic: false });
      throw Errors.paymentsUnavailable(`the payment provider did not start the checkout (${(e as Error).message}); nothing was charged, try again later`);
    }
    if (!session.url) throw Errors.paymentsUnavailable('the payment provider answered without a checkout address; nothing was charged, try again later');
    await this.database.tx((trx) => trx.updateTable('topups').set({ session_id: session.id }).where('id', '=', topupId).execute(), { atomic: false });
    return { topupId, sessionId: session.id, checkoutUrl: session.url };
  }

  /** The account's top-ups, newest first (at most LIST_LIMIT). */
  async list(accountId: string): Promise<TopupView[]> {
    const { rows, reversals } = await this.read(accountId);
    return rows.map((t) => topupView(t, reversals.get(t.id) ?? []));
  }

  /** The operator's view: top-ups with their reversals (of one account, or all), and reversals still waiting for their top-up's credit. */
  async listAll(accountId?: string): Promise<{ topups: AdminTopupView[]; unpaid: string; waiting: ReversalView[] }> {
    const { rows, reversals } = await this.read(accountId);
    const topups = rows.map((t) => {
      const own = reversals.get(t.id) ?? [];
      const fee = {
        fee: t.fee_micros == null ? null : usd(Number(t.fee_micros)),
        net: t.net_micros == null ? null : usd(Number(t.net_micros)),
        feeNote: t.fee_note,
      };
      return { ...topupView(t, own), ...fee, accountId: t.account_id, paymentIntent: t.payment_intent, reversals: own.map(reversalView) };
    });
    let unpaidQuery = this.database.db
      .selectFrom('topup_reversals')
      .innerJoin('topups', 'topups.id', 'topup_reversals.topup_id')
      .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('topup_reversals.unpaid_micros'), eb.val(0)).as('unpaid'));
    if (accountId) unpaidQuery = unpaidQuery.where('topups.account_id', '=', accountId);
    const unpaid = Number((await unpaidQuery.executeTakeFirst())?.unpaid ?? 0);
    const waiting = accountId
      ? []
      : (await this.database.db.selectFrom('topup_reversals').selectAll().where('applied', '=', 0).orderBy('created_at').limit(LIST_LIMIT).execute()).map(
          reversalView,
        );
    return { topups, unpaid: usd(unpaid), waiting };
  }

  private async read(accountId?: string) {
    let query = this.database.db.selectFrom('topups').selectAll().orderBy('created_at', 'desc').orderBy('id').limit(LIST_LIMIT);
    if (accountId) query = query.where('account_id', '=', accountId);
    const rows = await query.execute();
    const reversals = new Map<string, TopupReversalsTable[]>();
    if (rows.length > 0) {
      const found = await this.database.db
        .selectFrom('topup_reversals')
        .selectAll()
        .where(
          'topup_id',
          'in',
          rows.map((r) => r.id),
        )
        .orderBy('created_at')
        .execute();
      for (const r of found) reversals.set(r.topup_id!, [...(reversals.get(r.topup_id!) ?? []), r]);
    }
    return { rows, reversals };
  }
}
