import { sql, type Compilable, type Kysely } from 'kysely';
import type { Database } from './db.js';
import { precompile } from './prepared.js';
import { currentTx, readInTx } from './guards.js';

/** Most keys one batched query carries; more in one turn go in several queries. */
const MAX_KEYS = 500;

/** A query builder that `readByKey` completes with its key condition. */
type Where<R> = { where(column: string, op: '=', value: unknown): Compilable<R> };

interface Waiter<R> {
  resolve: (rows: R[]) => void;
  reject: (e: unknown) => void;
}

/**
 * A precompiled point read by one key column: `build()` is the query without its key condition,
 * `keyOf` reads the key back from a row. On PostgreSQL the reads asked for in the same event-loop
 * turn share one query, `where <column> = any($1)`: every query is a round trip through the pg
 * driver and the server (parse, bind, execute, socket writes and reads, the row description), and
 * under load one turn answers many requests, so a batch of them costs little more than one. On
 * SQLite (in process, synchronous) each read runs alone, as `precompile` runs it. Like `precompile`,
 * it refuses to run inside one of the database's transactions while the guards are on (guards.ts).
 */
export function readByKey<R>(database: Database, column: string, build: () => Where<R>, keyOf: (row: R) => string): (key: string) => Promise<R[]> {
  const { db } = database;
  const readOne = precompile(db, 1, (key) => build().where(column, '=', key));
  if (database.dialect !== 'postgres') return readOne;
  const readMany = precompile(db as Kysely<unknown>, 1, (keys) => build().where(column, '=', sql`any(${keys})`));
  let pending = new Map<string, Array<Waiter<R>>>();

  const run = async (batch: Map<string, Array<Waiter<R>>>): Promise<void> => {
    try {
      const byKey = new Map<string, R[]>();
      for (const row of await readMany([...batch.keys()])) {
        const key = keyOf(row);
        byKey.set(key, [...(byKey.get(key) ?? []), row]);
      }
      for (const [key, waiters] of batch) for (const w of waiters) w.resolve(byKey.get(key) ?? []);
    } catch (e) {
      for (const waiters of batch.values()) for (const w of waiters) w.reject(e);
    }
  };
  const flush = (): void => {
    const all = [...pending];
    pending = new Map();
    for (let i = 0; i < all.length; i += MAX_KEYS) void run(new Map(all.slice(i, i + MAX_KEYS)));
  };

  return (key) => {
    if (currentTx(db)) return Promise.reject(readInTx());
    return new Promise<R[]>((resolve, reject) => {
      if (pending.size === 0) setImmediate(flush);
      const waiters = pending.get(key);
      if (waiters) waiters.push({ resolve, reject });
      else pending.set(key, [{ resolve, reject }]);
    });
  };
}
