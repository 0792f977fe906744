import type { Kysely } from 'kysely';
import type { Ledger } from '../billing/index.js';
import type { Clock } from '../clock.js';
import type { Database, DB, TopupReversalsTable } from '../store/index.js';
import { MICROS_PER_CENT } from './amounts.js';
import { cancelWonDispute, disputeWon, insertOnce, paidTopup, wonBefore } from './disputes.js';
import type { Stripe } from './stripe.js';

/** What one webhook event did; the endpoint answers 200 with it (Stripe only needs the 2xx). */
export type EventOutcome =
  | 'credited'
  | 'already_credited'
  | 'expired'
  | 'not_paid'
  | 'unknown_session'
  | 'reversal_applied'
  | 'reversal_waiting'
  /** A won dispute: what it debited is credited back, its unpaid remainder cleared. */
  | 'dispute_won'
  /** A dispute that debited nothing and never will: it was waiting for its top-up's credit, or was won before it was created. */
  | 'dispute_cancelled'
  /** A dispute won before GenGate saw it created: recorded, so its creation, when it comes, is cancelled. */
  | 'dispute_won_early'
  /** Funds reinstated for a dispute that is not won (a partially refunded payment): not credited automatically. */
  | 'dispute_not_won'
  | 'duplicate'
  | 'ignored';

type Reversal = { kind: 'refund'; chargeId: string; refundedCents: number } | { kind: 'dispute'; disputeId: string; cents: number };

const idOf = (v: string | { id: string } | null | undefined): string | null => (v == null ? null : typeof v === 'string' ? v : v.id);
const lockName = (paymentIntent: string) => `gengate:stripe:${paymentIntent}`;

/**
 * The signed Stripe events that move money (DECISIONS §22, decision 1904). Every event is handled
 * in one transaction, so it is applied exactly once however often, late or in whatever order it
 * arrives, and in however many processes at once:
 * - a completed Checkout Session credits its top-up: the update of the row from `pending` to
 *   `paid` (unique session id) and the ledger credit commit together, and a second delivery finds
 *   the row paid;
 * - a refund (`charge.refunded`, whose amount is the charge's refunded total so far) or a dispute
 *   (`charge.dispute.created`) is a reversal row with its own key, then a debit of the account,
 *   never below zero, with the rest recorded as unpaid. A reversal that comes before its top-up's
 *   credit waits and is applied in the credit's transaction;
 * - a won dispute (`charge.dispute.funds_reinstated` with status `won`) is a second row keyed by
 *   the dispute (`dispute_won:<id>`) that gives back exactly what the dispute debited and clears
 *   its unpaid remainder (negative debited and unpaid); a dispute still waiting, or not seen yet,
 *   is cancelled instead and never debits (`disputes.ts`). `charge.dispute.closed` moves no money.
 * Everything about one payment intent runs under one lock (PostgreSQL advisory lock; SQLite has
 * one writer), so a refund and its credit never interleave. Stripe's fee is no part of it: it is
 * asked for after the credit has committed (`afterCredit`, `fees.ts`).
 */
export class StripeEvents {
  constructor(
    private readonly database: Database,
    private readonly ledger: Ledger,
    private readonly clock: Clock,
    /** Called once a credit has committed, outside its transaction (Stripe's fee is fetched then: `fees.ts`); it must not throw. */
    private readonly afterCredit: (topupId: string) => void = () => {},
  ) {}

  async handle(event: Stripe.Event): Promise<EventOutcome> {
    switch (event.type) {
      case 'checkout.session.completed':
      case 'checkout.session.async_payment_succeeded':
        return this.completed(event.data.object, event.id);
      case 'checkout.session.expired':
        return this.expired(event.data.object);
      case 'charge.refunded': {
        const charge = event.data.object;
        const intent = idOf(charge.payment_intent);
        if (!intent || charge.currency !== 'usd') return 'ignored';
        return this.reversal(intent, { kind: 'refund', chargeId: charge.id, refundedCents: charge.amount_refunded }, event.id);
      }
      case 'charge.dispute.created': {
        const dispute = event.data.object;
        const intent = idOf(dispute.payment_intent);
        if (!intent || dispute.currency !== 'usd') return 'ignored';
        return this.reversal(intent, { kind: 'dispute', disputeId: dispute.id, cents: dispute.amount }, event.id);
      }
      case 'charge.dispute.funds_reinstated': {
        const dispute = event.data.object;
        const intent = idOf(dispute.payment_intent);
        if (!intent || dispute.currency !== 'usd') return 'ignored';
        if (dispute.status !== 'won') return 'dispute_not_won';
        return this.database.tx(async (trx) => {
          await this.database.lock(trx, lockName(intent));
          return disputeWon(trx, this.ledger, this.clock, { intent, disputeId: dispute.id, cents: dispute.amount, eventId: event.id });
        });
      }
      // A status change: the money of a won dispute comes with funds_reinstated (handled once, above).
      case 'charge.dispute.closed':
      default:
        return 'ignored';
    }
  }

  /** Credits a paid Checkout Session once, then applies any reversal that came before it. */
  private async completed(session: Stripe.Checkout.Session, eventId: string): Promise<EventOutcome> {
    if (session.payment_status !== 'paid') return 'not_paid'; // delayed methods: async_payment_succeeded follows
    if (session.currency !== 'usd' || session.amount_total == null) return 'ignored';
    const micros = session.amount_total * MICROS_PER_CENT;
    const intent = idOf(session.payment_intent);
    const ref = session.client_reference_id ?? '';
    // Stripe's retries and duplicate deliveries of a credited session need no write transaction (nor wait for the lock).
    const seen = await this.database.db.selectFrom('topups').select('status').where('session_id', '=', session.id).executeTakeFirst();
    if (seen?.status === 'paid') return 'already_credited';
    const done = await this.database.tx(async (trx): Promise<{ outcome: EventOutcome; topupId?: string }> => {
      if (intent) await this.database.lock(trx, lockName(intent));
      const now = this.clock.now();
      const row = await trx
        .updateTable('topups')
        .set({ status: 'paid', paid_micros: micros, payment_intent: intent, paid_at: now, session_id: session.id })
        // An expired session cannot be paid, but an expiry that overtook its completion must not cost the payer.
        .where('status', 'in', ['pending', 'expired'])
        .where((eb) => eb.or([eb('session_id', '=', session.id), eb.and([eb('session_id', 'is', null), eb('id', '=', ref)])]))
        .returning(['id', 'account_id'])
        .executeTakeFirst();
      if (!row) {
        const known = await trx.selectFrom('topups').select('id').where('session_id', '=', session.id).executeTakeFirst();
        return { outcome: known ? 'already_credited' : 'unknown_session' };
      }
      await this.ledger.credit(trx, row.account_id, micros, 'topup', `card top-up ${row.id} (Stripe Checkout ${session.id}, event ${eventId})`, 'card');
      if (intent) {
        // Rows settled before the credit (a dispute cancelled by its win) now belong to the top-up.
        await trx.updateTable('topup_reversals').set({ topup_id: row.id }).where('payment_intent', '=', intent).where('topup_id', 'is', null).execute();
        const waiting = await trx
          .selectFrom('topup_reversals')
          .selectAll()
          .where('payment_intent', '=', intent)
          .where('applied', '=', 0)
          .orderBy('created_at')
          .execute();
        for (const r of waiting) await this.apply(trx, r, row.id, row.account_id);
      }
      return { outcome: 'credited', topupId: row.id };
    });
    if (done.topupId) this.afterCredit(done.topupId);
    return done.outcome;
  }

  /** Marks a session that was never paid as expired (the list shows it); a paid one stays paid. */
  private async expired(session: Stripe.Checkout.Session): Promise<EventOutcome> {
    const done = await this.database.tx(
      (trx) =>
        trx
          .updateTable('topups')
          .set({ status: 'expired' })
          .where('session_id', '=', session.id)
          .where('status', '=', 'pending')
          .returning('id')
          .executeTakeFirst(),
      { atomic: false },
    );
    return done ? 'expired' : 'ignored';
  }

  /** Records a refund or dispute once (by its key) and debits the account if its top-up is credited. */
  private async reversal(intent: string, what: Reversal, eventId: string): Promise<EventOutcome> {
    return this.database.tx(async (trx) => {
      await this.database.lock(trx, lockName(intent));
      let id: string;
      let micros: number;
      if (what.kind === 'refund') {
        // The event carries the charge's refunded total: only what no earlier event recorded is new,
        // so a replayed or older (reordered) event adds nothing.
        const before = await trx
          .selectFrom('topup_reversals')
          .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('amount_micros'), eb.val(0)).as('total'))
          .where('payment_intent', '=', intent)
          .where('kind', '=', 'refund')
          .executeTakeFirst();
        micros = what.refundedCents * MICROS_PER_CENT - Number(before?.total ?? 0);
        id = `refund:${what.chargeId}:${what.refundedCents}`;
      } else {
        micros = what.cents * MICROS_PER_CENT;
        id = `dispute:${what.disputeId}`;
      }
      if (micros <= 0) return 'duplicate';
      if (what.kind === 'dispute' && (await wonBefore(trx, what.disputeId))) return cancelWonDispute(trx, this.clock, { intent, id, micros, eventId });
      const row: TopupReversalsTable = {
        id,
        payment_intent: intent,
        topup_id: null,
        kind: what.kind,
        amount_micros: micros,
        debited_micros: 0,
        unpaid_micros: 0,
        applied: 0,
        event_id: eventId,
        created_at: this.clock.now(),
        applied_at: null,
      };
      if (!(await insertOnce(trx, row))) return 'duplicate';
      const topup = await paidTopup(trx, intent);
      if (!topup) return 'reversal_waiting';
      await this.apply(trx, row, topup.id, topup.account_id);
      return 'reversal_applied';
    });
  }

  /** Debits what the balance holds of the reversal (an adjustment) and records the rest as unpaid. */
  private async apply(trx: Kysely<DB>, r: TopupReversalsTable, topupId: string, accountId: string): Promise<void> {
    const amount = Number(r.amount_micros);
    const { taken } = await this.ledger.debitUpTo(
      trx,
      accountId,
      amount,
      `Stripe ${r.kind} of card top-up ${topupId} (${r.id}, event ${r.event_id})`,
      r.kind === 'refund' ? 'stripe_refund' : 'stripe_dispute',
    );
    await trx
      .updateTable('topup_reversals')
      .set({ applied: 1, topup_id: topupId, debited_micros: taken, unpaid_micros: amount - taken, applied_at: this.clock.now() })
      .where('id', '=', r.id)
      .execute();
  }
}
