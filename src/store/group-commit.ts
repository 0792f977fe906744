import type SqliteDatabase from 'better-sqlite3';
import { sql, type Kysely } from 'kysely';
import type { DB } from './schema.js';

/** Most transactions one commit carries: bounds the wait of the first of them. */
const MAX_BATCH = 64;

interface Job {
  fn: (trx: Kysely<DB>) => Promise<unknown>;
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
export function groupCommit(db: Kysely<DB>, conn: SqliteDatabase.Database, prepare: (c: Kysely<DB>) => void) {
  const queue: Job[] = [];
  let scheduled = false;

  const runBatch = async (batch: Job[]): Promise<void> => {
    const outcomes: Array<{ ok: true; value: unknown } | { ok: false; error: unknown }> = [];
    try {
      await db.connection().execute(async (c) => {
        prepare(c);
        await sql`begin immediate`.execute(c);
        try {
          for (const job of batch) {
            await sql`savepoint gc`.execute(c);
            try {
              const value = await job.fn(c);
              await sql`release gc`.execute(c);
              outcomes.push({ ok: true, value });
            } catch (error) {
              // An error SQLite answers by ending the whole transaction (disk full, I/O) takes the batch with it.
              if (!conn.inTransaction) throw error;
              await sql`rollback to gc`.execute(c);
              await sql`release gc`.execute(c);
              outcomes.push({ ok: false, error });
            }
          }
          await sql`commit`.execute(c);
        } catch (e) {
          if (conn.inTransaction) await sql`rollback`.execute(c);
          throw e;
        }
      });
    } catch (error) {
      for (const job of batch) job.reject(error);
      return;
    }
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

  return function tx<T>(fn: (trx: Kysely<DB>) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      queue.push({ fn, resolve: resolve as (v: unknown) => void, reject });
      if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    });
  };
}
