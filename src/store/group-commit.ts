import type { Kysely } from 'kysely';
import type { DB } from './schema.js';
import type { SlowWatch } from './guards.js';
import type { Connection } from './sqlite-driver.js';

/** Most transactions one commit carries: bounds the wait of the first of them. */
const MAX_BATCH = 64;

interface Job {
  fn: (trx: Kysely<DB>) => Promise<unknown>;
  /** Known to run long (migrations): the batch is not reported as slow. */
  long: boolean;
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
}

/**
 * SQLite transactions with group commit. The one connection already runs transactions one after
 * another; what each costs most is its COMMIT, which writes every page it touched to the WAL (the
 * tasks table and its indexes, the ledger, the account: about 110 µs for a createTask). Callers that
 * ask for a transaction in the same event-loop turn share one BEGIN IMMEDIATE ... COMMIT instead:
 * each runs alone inside its own SAVEPOINT, in arrival order, so it sees exactly what serial
 * transactions would, and a caller that throws rolls back only its own savepoint. Nobody's promise
 * settles before the shared COMMIT has succeeded; when it (or the transaction as a whole) fails,
 * every caller of the batch gets the error and nothing of the batch is kept.
 */
export function groupCommit(
  db: Kysely<DB>,
  conn: Connection,
  hooks: {
    /** Readies the batch's handle (records its dialect). */
    prepare: (c: Kysely<DB>) => void;
    /** Runs just before COMMIT (ends the side reader's snapshot). */
    beforeCommit?: () => void;
    /** Runs one caller's function on the batch's handle (marks it as inside a transaction: guards.ts). */
    run: <T>(c: Kysely<DB>, fn: (trx: Kysely<DB>) => Promise<T>) => Promise<T>;
    /** Reports a batch that held the connection too long: its awaits held up every writer of the process. */
    slow: SlowWatch;
    /** Keeps transaction scopes tracked while the batch runs, returning the release (guards.ts holdScopes; none with the guards off). */
    hold?: () => () => void;
  },
) {
  const { prepare, beforeCommit = () => {}, run, slow, hold = () => () => {} } = hooks;
  const queue: Job[] = [];
  let scheduled = false;
  // Transaction control runs on the connection directly, not through Kysely: about 18 of these a
  // task (its creation and each engine step) cost more through the query builder than in SQLite.
  // Safe because a batch holds Kysely's one connection for its whole run.
  const control = (text: string) => {
    const stmt = conn.prepare(text);
    return () => void stmt.run();
  };
  const begin = control('BEGIN IMMEDIATE');
  const savepoint = control('SAVEPOINT gc');
  const release = control('RELEASE gc');
  const rollbackTo = control('ROLLBACK TO gc');
  const commit = control('COMMIT');
  const rollback = control('ROLLBACK');

  const runBatch = async (batch: Job[]): Promise<void> => {
    const outcomes: Array<{ ok: true; value: unknown } | { ok: false; error: unknown }> = [];
    // A transaction alone in its batch needs no savepoint: if it throws, the whole transaction goes.
    const alone = batch.length === 1;
    let held = 0;
    // One scope-tracking hold for the batch, not one toggle of async hooks per caller (guards.ts).
    const releaseHold = hold();
    try {
      await db.connection().execute(async (c) => {
        const start = slow.ms > 0 ? slow.now() : 0;
        prepare(c);
        begin();
        try {
          for (const job of batch) {
            if (!alone) savepoint();
            try {
              const value = await run(c, job.fn);
              if (!alone) release();
              outcomes.push({ ok: true, value });
            } catch (error) {
              // An error SQLite answers by ending the whole transaction (disk full, I/O) takes the batch with it.
              if (!conn.inTransaction) throw error;
              if (!alone) {
                rollbackTo();
                release();
              }
              outcomes.push({ ok: false, error });
            }
          }
          if (alone && !outcomes[0]!.ok) rollback();
          else {
            beforeCommit();
            commit();
          }
          if (slow.ms > 0) held = slow.now() - start;
        } catch (e) {
          if (conn.inTransaction) rollback();
          throw e;
        }
      });
    } catch (error) {
      for (const job of batch) job.reject(error);
      return;
    } finally {
      releaseHold();
    }
    if (held > slow.ms && slow.ms > 0 && !batch.some((job) => job.long)) slow.onSlow(held, batch.length);
    batch.forEach((job, i) => {
      const o = outcomes[i]!;
      if (o.ok) job.resolve(o.value);
      else job.reject(o.error);
    });
  };

  const flush = (): void => {
    scheduled = false;
    while (queue.length > 0) void runBatch(queue.splice(0, MAX_BATCH));
  };

  return function tx<T>(fn: (trx: Kysely<DB>) => Promise<T>, long = false): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      queue.push({ fn, long, resolve: resolve as (v: unknown) => void, reject });
      if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    });
  };
}
