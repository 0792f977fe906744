import { z } from 'zod';
import { readTopupAmount } from '../payments/index.js';
import { Errors } from '../errors.js';
import type { KeyedOperation } from './operation.js';

const usd4 = z
  .string()
  .regex(/^\d+\.\d{4}$/)
  .describe('USD with 4 decimals, e.g. "12.3400"');
const signedUsd4 = z
  .string()
  .regex(/^-?\d+\.\d{4}$/)
  .describe('USD with 4 decimals, negative when given back, e.g. "-12.3400"');

/** POST /api/v1/topups body: the amount in USD (whole cents, from TOPUP_MIN to TOPUP_MAX). */
export const topupBody = z.object({
  amount: z.union([z.string(), z.number()]).describe('USD in whole cents, e.g. "25" or 12.5, from TOPUP_MIN to TOPUP_MAX (the top-up page lists the presets)'),
});

export const CheckoutStarted = z.object({
  topupId: z.string(),
  sessionId: z.string().describe('The Stripe Checkout Session id'),
  checkoutUrl: z.string().describe("Stripe's payment page; the balance is credited when Stripe confirms the payment"),
});

const topupFields = {
  id: z.string(),
  amount: usd4,
  currency: z.literal('USD'),
  status: z.enum(['pending', 'paid', 'expired']).describe('pending until Stripe confirms the payment; expired when the checkout ran out unpaid'),
  paid: usd4.describe('Credited to the balance (the amount Stripe collected)'),
  refunded: usd4,
  disputed: usd4,
  disputesWon: usd4.describe('Disputes won: what they had debited was credited back'),
  unpaid: usd4.describe('Refunded or disputed money the balance could not cover (a won dispute clears its part)'),
  sessionId: z.string().nullable(),
  createdAt: z.string(),
  paidAt: z.string().nullable(),
};
export const Topup = z.object(topupFields);

const Reversal = z.object({
  id: z.string(),
  kind: z.enum(['refund', 'dispute', 'dispute_won']).describe('dispute_won: a won dispute, giving back what its dispute took'),
  amount: usd4,
  debited: signedUsd4.describe('Taken from the balance; negative on dispute_won (credited back)'),
  unpaid: signedUsd4.describe("What the balance could not cover; negative on dispute_won (the dispute's remainder cleared)"),
  applied: z.boolean().describe('false while its top-up is not credited yet (the event came first)'),
  paymentIntent: z.string(),
  topupId: z.string().nullable(),
  eventId: z.string(),
  createdAt: z.string(),
});
/** The operator's view (GET /admin/v1/topups). */
export const AdminTopups = z.object({
  topups: z.array(
    z.object({
      ...topupFields,
      accountId: z.string(),
      paymentIntent: z.string().nullable(),
      fee: usd4.nullable().describe("Stripe's fee of the payment (its charge's balance transaction); null while not known (see feeNote)"),
      net: usd4.nullable().describe('What Stripe pays out for the payment: paid less the fee; null while the fee is not known'),
      feeNote: z
        .string()
        .nullable()
        .describe('Why the fee is not known: not available yet, reported in another currency than USD, or Stripe did not answer (retried, then given up)'),
      reversals: z.array(Reversal),
    }),
  ),
  unpaid: usd4.describe('Total unpaid remainder of the listed top-ups'),
  waiting: z.array(Reversal).describe('Refunds and disputes whose top-up is not credited (yet)'),
});
export const adminTopupsQuery = z.object({ accountId: z.string().min(1).max(100).optional().describe('Only this account') });

/** POST /api/v1/topups: starts a card top-up (Stripe Checkout); credits nothing by itself. */
export const createTopup: KeyedOperation = {
  spec: {
    method: 'post',
    path: '/api/v1/topups',
    id: 'createTopup',
    tag: 'Payments',
    auth: 'key',
    scope: 'billing',
    summary: 'Start a card top-up (Stripe Checkout)',
    description:
      'Creates a Stripe Checkout Session for the amount and answers its address. The balance is credited only when Stripe confirms the payment to the webhook, never by the return to the success page. 404 when card top-ups are off (no STRIPE_SECRET_KEY); 503 when Stripe cannot be reached.',
    body: topupBody,
    ok: { schema: CheckoutStarted, envelope: true, description: 'The checkout to send the payer to' },
    errors: ['invalid_request', 'missing_field', 'not_found', 'payments_unavailable'],
  },
  handler: (services) => {
    const { topups } = services.payments;
    return async ({ principal, body }) => {
      if (!topups.enabled)
        throw Errors.notFound('card top-ups are not enabled on this server (STRIPE_SECRET_KEY is not set); ask the operator to top up your account');
      const amount = readTopupAmount((body as { amount?: unknown } | null)?.amount, topups.amounts);
      const started = await topups.start(principal.accountId, amount);
      return { data: started };
    };
  },
};

/** GET /api/v1/topups: the account's card top-ups, newest first. */
export const listTopups: KeyedOperation = {
  spec: {
    method: 'get',
    path: '/api/v1/topups',
    id: 'listTopups',
    tag: 'Payments',
    auth: 'key',
    scope: 'balance:read',
    summary: "The account's card top-ups, newest first (at most 100)",
    ok: { schema: z.array(Topup), envelope: true, description: 'Top-ups' },
  },
  handler:
    (services) =>
    async ({ principal }) => ({ data: await services.payments.topups.list(principal.accountId) }),
};
