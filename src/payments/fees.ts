import type { Clock } from '../clock.js';
import { WorkLoop, type Database, type WorkLog } from '../store/index.js';
import { MICROS_PER_CENT } from './amounts.js';
import type { Stripe } from './stripe.js';

/** What Stripe says of a top-up's fee: known (USD), or not yet, and whether trying again can help. */
export type FeeFacts = { kind: 'known'; feeMicros: number; netMicros: number } | { kind: 'pending'; note: string; final: boolean };

/**
 * The delays before the tries after the first: about four days in all, then the fee is left
 * pending (shown as such) and nothing more is asked. A balance transaction of a card payment
 * exists as soon as the payment succeeds; the retry is for Stripe being unreachable.
 */
export const FEE_RETRY_DELAYS_MS = [60_000, 5 * 60_000, 15 * 60_000, 3_600_000, 3 * 3_600_000, 12 * 3_600_000, 24 * 3_600_000, 24 * 3_600_000, 24 * 3_600_000];
/** How often the retry looks for due top-ups when it has nothing to do. */
export const FEE_POLL_MS = 60_000;

/**
 * Reads Stripe's fee of a payment from its latest charge's balance transaction, in one call
 * (`expand: latest_charge.balance_transaction`, Stripe's documented way to see a payment's fee).
 * Amounts are in the smallest unit of the balance transaction's currency (cents for USD). One try
 * only: the retry is GenGate's own, bounded, schedule.
 */
export async function fetchFee(stripe: Stripe, paymentIntent: string): Promise<FeeFacts> {
  const intent = await stripe.paymentIntents.retrieve(
    paymentIntent,
    { expand: ['latest_charge.balance_transaction'] },
    { maxNetworkRetries: 0, timeout: 10_000 },
  );
  const charge = intent.latest_charge;
  if (!charge || typeof charge === 'string') return { kind: 'pending', note: 'the payment has no charge yet', final: false };
  const txn = charge.balance_transaction;
  if (!txn || typeof txn === 'string') return { kind: 'pending', note: 'the balance transaction is not available yet', final: false };
  if (txn.currency !== 'usd') return { kind: 'pending', note: `Stripe reports the fee in ${txn.currency.toUpperCase()}, not USD`, final: true };
  return { kind: 'known', feeMicros: txn.fee * MICROS_PER_CENT, netMicros: txn.net * MICROS_PER_CENT };
}

interface Due {
  id: string;
  paymentIntent: string;
  attempts: number;
}

/**
 * Stripe's fee of each paid card top-up (decision 1906, amended), fetched after the credit has
 * committed and never inside it: a fetch that fails or hangs changes nothing of the credit. The
 * webhook asks for one try right after its credit (`afterCredit`, not awaited by the answer); the
 * retry (a work loop, `start`) takes paid top-ups without a fee that are due: never tried (also those
 * paid before migration 020), or tried and due again by FEE_RETRY_DELAYS_MS. Each try first takes
 * the row with a compare-and-set on `fee_attempts`, so two processes never ask Stripe twice for
 * the same try, and sets the next due time (its lease). A fee in another currency than USD is left
 * pending for good (an exchange rate GenGate does not have); so is one still missing after the
 * last try. Only `fee_*` and `net_micros` are written: never the ledger.
 */
export class TopupFees {
  private readonly work: WorkLoop<Due>;
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    private readonly database: Database,
    private readonly clock: Clock,
    private readonly stripe: Stripe,
  ) {
    this.work = new WorkLoop<Due>({ name: 'stripe fees', concurrency: 2, pollMs: FEE_POLL_MS, claim: (n) => this.claimDue(n), run: (d) => this.fetch(d) });
  }

  /** Starts the retry (idempotent); `gengate serve` starts it where the engine runs. */
  start(log?: WorkLog): void {
    this.work.start(log);
  }

  /**
   * Where a failed try is reported, also in a process that does not run the retry: `gengate serve`
   * sets it in every role, since an API process makes the try right after each credit.
   */
  logTo(log: WorkLog): void {
    this.work.log = log;
  }

  /** Stops the retry and waits for the fetches in progress. */
  async stop(): Promise<void> {
    await this.work.stop();
    await this.idle();
  }

  /** Waits for the fetches started by `afterCredit` (tests; stop). */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  /** One try for a top-up just credited, in the background; it never throws (a failure leaves it to the retry). */
  afterCredit(topupId: string): void {
    const p = (async () => {
      const row = await this.database.db
        .selectFrom('topups')
        .select(['id', 'payment_intent', 'fee_attempts'])
        .where('id', '=', topupId)
        .where('fee_attempts', '=', 0)
        .where('fee_micros', 'is', null)
        .executeTakeFirst();
      if (!row?.payment_intent) return;
      const due = await this.take({ id: row.id, paymentIntent: row.payment_intent, attempts: Number(row.fee_attempts) });
      if (due) await this.fetch(due);
    })()
      .catch((e: unknown) => this.work.log.warn({ err: e, topupId }, 'stripe fees: the fee is left to the retry'))
      .finally(() => this.inFlight.delete(p));
    this.inFlight.add(p);
  }

  /** One round of the retry without the loop (tests): takes what is due at `now` and fetches it; the number of top-ups tried. */
  async retry(now = this.clock.now()): Promise<number> {
    const due = await this.claimDue(20, now);
    for (const d of due) await this.fetch(d);
    return due.length;
  }

  /** Takes up to `n` due top-ups, oldest payment first. */
  private async claimDue(n: number, now = this.clock.now()): Promise<Due[]> {
    const rows = await this.database.db
      .selectFrom('topups')
      .select(['id', 'payment_intent', 'fee_attempts'])
      // Spelt as the partial index topups_fee_missing (migration 020) is.
      .where('fee_micros', 'is', null)
      .where('paid_at', 'is not', null)
      .where('payment_intent', 'is not', null)
      .where((eb) => eb.or([eb('fee_attempts', '=', 0), eb('fee_due_at', '<=', now)]))
      .orderBy('paid_at')
      .limit(n)
      .execute();
    const taken: Due[] = [];
    for (const r of rows) {
      const due = await this.take({ id: r.id, paymentIntent: r.payment_intent!, attempts: Number(r.fee_attempts) }, now);
      if (due) taken.push(due);
    }
    return taken;
  }

  /** Takes one try of a top-up (compare-and-set on its attempts) and sets when the next is due; null if another process took it. */
  private async take(d: Due, now = this.clock.now()): Promise<Due | null> {
    const delay = FEE_RETRY_DELAYS_MS[Math.min(d.attempts, FEE_RETRY_DELAYS_MS.length - 1)]!;
    const taken = await this.database.tx(
      (trx) =>
        trx
          .updateTable('topups')
          .set({ fee_attempts: d.attempts + 1, fee_due_at: now + delay })
          .where('id', '=', d.id)
          .where('fee_attempts', '=', d.attempts)
          .where('fee_micros', 'is', null)
          .returning('id')
          .executeTakeFirst(),
      { atomic: false },
    );
    return taken ? { ...d, attempts: d.attempts + 1 } : null;
  }

  /** Asks Stripe (outside any transaction) and writes what it said; a failure is kept as the note and retried when due. */
  private async fetch(d: Due): Promise<void> {
    let facts: FeeFacts;
    try {
      facts = await fetchFee(this.stripe, d.paymentIntent);
    } catch (e) {
      facts = { kind: 'pending', note: `Stripe did not answer: ${(e as Error).message}`, final: false };
    }
    const last = d.attempts > FEE_RETRY_DELAYS_MS.length;
    const fields =
      facts.kind === 'known'
        ? { fee_micros: facts.feeMicros, net_micros: facts.netMicros, fee_note: null, fee_due_at: null }
        : facts.final || last
          ? { fee_note: last && !facts.final ? `${facts.note} (given up after ${d.attempts} tries)` : facts.note, fee_due_at: null }
          : { fee_note: facts.note };
    await this.database.tx(
      (trx) => trx.updateTable('topups').set(fields).where('id', '=', d.id).where('fee_attempts', '=', d.attempts).where('fee_micros', 'is', null).execute(),
      { atomic: false },
    );
  }
}
