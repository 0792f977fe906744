import type { Kysely } from 'kysely';
import type { Ledger } from '../billing/index.js';
import type { Clock } from '../clock.js';
import type { DB, TopupReversalsTable } from '../store/index.js';
import { MICROS_PER_CENT } from './amounts.js';

/** What a won dispute did (a part of the webhook's EventOutcome). */
export type DisputeOutcome = 'dispute_won' | 'dispute_cancelled' | 'dispute_won_early' | 'duplicate';

/** The row of a won dispute, next to the dispute's own `dispute:<id>`. */
const wonId = (disputeId: string) => `dispute_won:${disputeId}`;

/** The paid top-up of a payment intent, if it is credited. */
export const paidTopup = (trx: Kysely<DB>, intent: string) =>
  trx.selectFrom('topups').select(['id', 'account_id']).where('payment_intent', '=', intent).where('status', '=', 'paid').executeTakeFirst();

/** A settled row: applied now, moving nothing unless `fields` say so. */
function settledRow(
  clock: Clock,
  fields: Pick<TopupReversalsTable, 'id' | 'payment_intent' | 'topup_id' | 'kind' | 'amount_micros' | 'event_id'>,
): TopupReversalsTable {
  const now = clock.now();
  return { ...fields, debited_micros: 0, unpaid_micros: 0, applied: 1, created_at: now, applied_at: now };
}

/** Inserts a reversal row once (by its id); false when it was there already (a replay). */
export async function insertOnce(trx: Kysely<DB>, row: TopupReversalsTable): Promise<boolean> {
  const inserted = await trx
    .insertInto('topup_reversals')
    .values(row)
    .onConflict((oc) => oc.column('id').doNothing())
    .returning('id')
    .executeTakeFirst();
  return inserted !== undefined;
}

/**
 * A won dispute (`charge.dispute.funds_reinstated`, status `won`), inside the caller's transaction
 * under the payment intent's lock (decision 1904, amended). Recorded once as `dispute_won:<id>`:
 * - the dispute was applied: the account gets back exactly what it debited (an adjustment, source
 *   `stripe_dispute_won`), and the row's negative debited and unpaid cancel the dispute's, so its
 *   unpaid remainder is no longer owed;
 * - the dispute was waiting for its top-up's credit: it is cancelled (applied, nothing moved), so
 *   the credit does not apply it;
 * - the dispute was not seen yet: the win is recorded and its creation, when it comes, is
 *   cancelled (`cancelWonDispute`); nothing is credited, since nothing was debited.
 */
export async function disputeWon(
  trx: Kysely<DB>,
  ledger: Ledger,
  clock: Clock,
  won: { intent: string; disputeId: string; cents: number; eventId: string },
): Promise<DisputeOutcome> {
  const dispute = await trx.selectFrom('topup_reversals').selectAll().where('id', '=', `dispute:${won.disputeId}`).executeTakeFirst();
  const applied = dispute !== undefined && Number(dispute.applied) === 1;
  const debited = applied ? Number(dispute.debited_micros) : 0;
  const row: TopupReversalsTable = {
    ...settledRow(clock, {
      id: wonId(won.disputeId),
      payment_intent: won.intent,
      topup_id: dispute?.topup_id ?? (await paidTopup(trx, won.intent))?.id ?? null,
      kind: 'dispute_won',
      amount_micros: dispute ? Number(dispute.amount_micros) : won.cents * MICROS_PER_CENT,
      event_id: won.eventId,
    }),
    debited_micros: -debited,
    unpaid_micros: applied ? -Number(dispute.unpaid_micros) : 0,
  };
  if (!(await insertOnce(trx, row))) return 'duplicate';
  if (!dispute) return 'dispute_won_early';
  if (!applied) {
    await trx.updateTable('topup_reversals').set({ applied: 1, applied_at: row.applied_at }).where('id', '=', dispute.id).execute();
    return 'dispute_cancelled';
  }
  if (debited > 0) {
    const topup = await trx.selectFrom('topups').select('account_id').where('id', '=', dispute.topup_id!).executeTakeFirstOrThrow();
    await ledger.credit(
      trx,
      topup.account_id,
      debited,
      'adjustment',
      `Stripe dispute won of card top-up ${dispute.topup_id} (${row.id}, event ${won.eventId})`,
      'stripe_dispute_won',
    );
  }
  return 'dispute_won';
}

/** Whether the dispute was won before its creation was seen. */
export async function wonBefore(trx: Kysely<DB>, disputeId: string): Promise<boolean> {
  return (await trx.selectFrom('topup_reversals').select('id').where('id', '=', wonId(disputeId)).executeTakeFirst()) !== undefined;
}

/** Records the creation of a dispute already won as cancelled: applied, nothing debited, nothing unpaid. */
export async function cancelWonDispute(
  trx: Kysely<DB>,
  clock: Clock,
  d: { intent: string; id: string; micros: number; eventId: string },
): Promise<DisputeOutcome> {
  const topupId = (await paidTopup(trx, d.intent))?.id ?? null;
  const row = settledRow(clock, { id: d.id, payment_intent: d.intent, topup_id: topupId, kind: 'dispute', amount_micros: d.micros, event_id: d.eventId });
  return (await insertOnce(trx, row)) ? 'dispute_cancelled' : 'duplicate';
}
