import type { Compilable, Kysely } from 'kysely';

/** Runs compiled SQL synchronously on a read-only connection (SQLite only); sees committed data. */
export type FastReader = (sql: string, parameters: readonly unknown[]) => unknown[];

const fastReaders = new WeakMap<object, FastReader>();

/** Registers a read-only side connection for a database handle (done by openDatabase for SQLite). */
export function registerFastReader(db: Kysely<any>, reader: FastReader): void {
  fastReaders.set(db, reader);
}

/**
 * A query compiled once and then run with new argument values: Kysely otherwise rebuilds and
 * compiles the SQL on every call, which costs more than the query itself on hot read paths
 * (auth, balance). `build` receives placeholders and must use each as a plain parameter value.
 * On SQLite a read through the main handle goes to a read-only WAL connection, so it neither
 * waits for nor sees an open write transaction; inside a transaction (another handle) it runs
 * through Kysely as usual.
 */
export function precompile<R, DBT>(db: Kysely<DBT>, arity: number, build: (...args: string[]) => Compilable<R>) {
  const placeholders = Array.from({ length: arity }, (_, i) => `\u0000gengate-arg-${i}\u0000`);
  const compiled = build(...placeholders).compile();
  const slots = compiled.parameters.map((p) => placeholders.indexOf(p as string));
  const fast = compiled.query.kind === 'SelectQueryNode' ? fastReaders.get(db) : undefined;
  return async (...args: unknown[]): Promise<R[]> => {
    const parameters = compiled.parameters.map((p, i) => (slots[i]! >= 0 ? args[slots[i]!] : p));
    if (fast) return fast(compiled.sql, parameters) as R[];
    const result = await db.executeQuery<R>({ ...compiled, parameters });
    return result.rows;
  };
}
