import type { Compilable, Insertable, Kysely } from 'kysely';

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
  const { compiled, bind } = compileWithSlots(arity, build);
  const fast = compiled.query.kind === 'SelectQueryNode' ? fastReaders.get(db) : undefined;
  return async (...args: unknown[]): Promise<R[]> => {
    const parameters = bind(args);
    if (fast) return fast(compiled.sql, parameters) as R[];
    const result = await db.executeQuery<R>({ ...compiled, parameters });
    return result.rows;
  };
}

/**
 * A statement compiled once per dialect and then run on the executor the caller passes (the main
 * handle or its transaction) with new argument values: the writes of a transaction on a hot path
 * (createTask's charge, task row and event) skip Kysely's build-and-compile on every call.
 * `build` receives the dialect's query builder and placeholders, used as plain parameter values.
 */
export function prepared<R, DBT>(arity: number, build: (db: Kysely<DBT>, ...args: string[]) => Compilable<R>) {
  const byDialect = new Map<string, ReturnType<typeof compileWithSlots<R>>>();
  return async (on: { db: Kysely<DBT>; dialect: string }, executor: Kysely<DBT>, ...args: unknown[]): Promise<R[]> => {
    let c = byDialect.get(on.dialect);
    if (!c) {
      c = compileWithSlots(arity, (...ph) => build(on.db, ...ph));
      byDialect.set(on.dialect, c);
    }
    const result = await executor.executeQuery<R>({ ...c.compiled, parameters: c.bind(args) });
    return result.rows;
  };
}

/** Compiles `build` with unique placeholder values and returns how to put real arguments in their slots. */
function compileWithSlots<R>(arity: number, build: (...args: string[]) => Compilable<R>) {
  const placeholders = Array.from({ length: arity }, (_, i) => `\u0000gengate-arg-${i}\u0000`);
  const compiled = build(...placeholders).compile();
  const slots = compiled.parameters.map((p) => placeholders.indexOf(p as string));
  if (new Set(slots.filter((s) => s >= 0)).size < arity) throw new Error(`a prepared statement does not use all of its ${arity} arguments: ${compiled.sql}`);
  return { compiled, bind: (args: readonly unknown[]) => compiled.parameters.map((p, i) => (slots[i]! >= 0 ? args[slots[i]!] : p)) };
}

const insertShapes = new Map<string, ReturnType<typeof compileWithSlots<unknown>>>();

/**
 * Inserts one row on `executor` with SQL compiled once per (dialect, table, column list): the
 * insert of a hot transaction without Kysely's per-call build and compile. Values are bound as
 * parameters exactly as Kysely would bind them.
 */
export async function insertRow<DBT, T extends keyof DBT & string>(
  on: { db: Kysely<DBT>; dialect: string },
  executor: Kysely<DBT>,
  table: T,
  row: Insertable<DBT[T]>,
): Promise<void> {
  // Kysely leaves out undefined values; so does the column list here.
  const columns = Object.keys(row).filter((col) => (row as Record<string, unknown>)[col] !== undefined);
  const shape = `${on.dialect}\u0000${table}\u0000${columns.join(',')}`;
  let c = insertShapes.get(shape);
  if (!c) {
    c = compileWithSlots(columns.length, (...ph) => on.db.insertInto(table).values(Object.fromEntries(columns.map((col, i) => [col, ph[i]])) as never));
    if (insertShapes.size >= 200) insertShapes.clear();
    insertShapes.set(shape, c);
  }
  await executor.executeQuery({ ...c.compiled, parameters: c.bind(columns.map((col) => (row as Record<string, unknown>)[col])) });
}
