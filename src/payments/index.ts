/**
 * Card top-ups through Stripe Checkout (DECISIONS §22, decision 1904): amounts, Checkout Sessions,
 * the signed webhook that credits, refunds and disputes as adjustments (and gives back won disputes), Stripe's fee of
 * each paid top-up (fetched after the credit, retried), and the plain pages.
 */
import type { Ledger } from '../billing/index.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import type { Database } from '../store/index.js';
import { topupAmounts } from './amounts.js';
import { StripeEvents } from './events.js';
import { TopupFees } from './fees.js';
import { stripeClient, type Stripe } from './stripe.js';
import { Topups } from './topups.js';

export { readTopupAmount, topupAmounts, usdText, type TopupAmounts } from './amounts.js';
export { Topups, LIST_LIMIT, type Checkout, type TopupView, type AdminTopupView, type TopupFeeView, type ReversalView } from './topups.js';
export { StripeEvents, type EventOutcome } from './events.js';
export { TopupFees, fetchFee, FEE_RETRY_DELAYS_MS, type FeeFacts } from './fees.js';
export { successPage, cancelPage } from './pages.js';

/** Thrown when a webhook's signature does not verify: the endpoint answers 400 and writes nothing. */
export class ForgedEvent extends Error {
  override name = 'ForgedEvent';
}

/** Top-ups and the webhook's events, built once from the settings. */
export class Payments {
  constructor(
    readonly topups: Topups,
    readonly events: StripeEvents,
    /** Stripe's fee of each paid top-up, fetched after its credit and retried (null without Stripe). */
    readonly fees: TopupFees | null,
    private readonly stripe: Stripe | null,
    private readonly webhookSecret: string | null,
  ) {}

  get enabled(): boolean {
    return this.stripe !== null && this.webhookSecret !== null;
  }

  /** Checks the `Stripe-Signature` header against the raw body (and its age, Stripe's 5-minute tolerance); returns the event. */
  verify(raw: Buffer, header: string | undefined): Stripe.Event {
    if (!this.stripe || !this.webhookSecret) throw new ForgedEvent('card top-ups are not enabled on this server');
    if (!header) throw new ForgedEvent('the Stripe-Signature header is missing');
    try {
      return this.stripe.webhooks.constructEvent(raw, header, this.webhookSecret);
    } catch (e) {
      throw new ForgedEvent(`the Stripe-Signature header does not verify: ${(e as Error).message}`);
    }
  }
}

export function buildPayments(config: Config, database: Database, ledger: Ledger, clock: Clock): Payments {
  const stripe = stripeClient(config);
  const base = config.PUBLIC_BASE_URL;
  const topups = new Topups(database, clock, stripe, topupAmounts(config), { successUrl: `${base}/topup/success`, cancelUrl: `${base}/topup/cancel` });
  const fees = stripe ? new TopupFees(database, clock, stripe) : null;
  const events = new StripeEvents(database, ledger, clock, (topupId) => fees?.afterCredit(topupId));
  return new Payments(topups, events, fees, stripe, config.STRIPE_WEBHOOK_SECRET ?? null);
}
