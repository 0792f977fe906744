import { sql, type Compilable, type Insertable, type Kysely, type QueryResult, type Updateable } from 'kysely';
import { boundedCache } from '../cache.js';
import { assertWritable, currentTx, readInTx } from './guards.js';

/**
 * Runs a compiled SELECT on a side path: on SQLite a read-only connection (synchronous; sees
 * committed data), on PostgreSQL a named prepared statement on the pool.
 */
export type FastReader = (sql: string, parameters: readonly unknown[]) => unknown[] | Promise<unknown[]>;

const fastReaders = new WeakMap<object, FastReader>();

/** Registers the side path of a database handle's precompiled reads (done by openDatabase). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any database schema: the guard and the statement cache work on every one
export function registerFastReader(db: Kysely<any>, reader: FastReader): void {
  fastReaders.set(db, reader);
}

/**
 * A query compiled once and then run with new argument values: Kysely otherwise rebuilds and
 * compiles the SQL on every call, which costs more than the query itself on hot read paths
 * (auth, balance, recordInfo). `build` receives placeholders and must use each as a plain
 * parameter value. A SELECT on the read handle goes to its fast reader: on SQLite a read-only WAL
 * connection, so it neither waits for nor sees an open write transaction; on PostgreSQL a named
 * prepared statement, parsed and planned once per connection. It never sees an open transaction's
 * writes, so calling it from inside one of the database's transactions throws while the store's
 * guards are on (guards.ts; read on the transaction handle there).
 */
export function precompile<R, DBT>(db: Kysely<DBT>, arity: number, build: (...args: string[]) => Compilable<R>) {
  const { compiled, bind } = compileWithSlots(arity, build);
  const fast = compiled.query.kind === 'SelectQueryNode' ? fastReaders.get(db) : undefined;
  return async (...args: unknown[]): Promise<R[]> => {
    const parameters = bind(args);
    if (currentTx(db)) throw readInTx();
    if (fast) return (await fast(compiled.sql, parameters)) as R[];
    const result = await db.executeQuery<R>({ ...compiled, parameters });
    return result.rows;
  };
}

const dialects = new WeakMap<object, string>();

/**
 * Runs compiled SQL on a transaction's own connection, without Kysely's executor: SQLite's driver is
 * synchronous underneath, and the executor's connection hand-over and result transform cost more
 * than a small statement itself (decision 0009).
 */
export type DirectRunner = (sql: string, parameters: readonly unknown[]) => QueryResult<unknown>;

const directRunners = new WeakMap<object, DirectRunner>();

/** Records how to run compiled statements on an executor directly (openDatabase does this for SQLite transactions). */
export function registerDirect(executor: object, run: DirectRunner): void {
  directRunners.set(executor, run);
}

/** Records which SQL dialect a query builder (a database handle or one of its transactions) speaks; openDatabase does this. */
export function registerDialect(executor: object, dialect: string): void {
  dialects.set(executor, dialect);
}

/** The dialect registered for a handle or transaction, if any. */
export function dialectOf(executor: object): string | undefined {
  return dialects.get(executor);
}

/**
 * A statement compiled once per dialect and then run on the executor the caller passes (the main
 * handle or one of its transactions) with new argument values: the statements of hot transactions
 * (createTask, the engine's steps) skip Kysely's build-and-compile on every call. `build` receives
 * a query builder of the executor's dialect and placeholders, each used as a plain parameter value.
 * An executor whose dialect was never registered gets the statement built and compiled on the spot.
 */
export function prepared<R, DBT>(arity: number, build: (db: Kysely<DBT>, ...args: string[]) => Compilable<R>) {
  const byDialect = new Map<string, ReturnType<typeof compileWithSlots<R>>>();
  return async (executor: Kysely<DBT>, ...args: unknown[]): Promise<QueryResult<R>> => {
    assertWritable(executor);
    const dialect = dialects.get(executor);
    let c = dialect ? byDialect.get(dialect) : undefined;
    if (!c) {
      c = compileWithSlots(arity, (...ph) => build(executor, ...ph));
      if (dialect) byDialect.set(dialect, c);
    }
    const direct = directRunners.get(executor);
    if (direct) return direct(c.compiled.sql, c.bind(args)) as QueryResult<R>;
    return executor.executeQuery<R>({ ...c.compiled, parameters: c.bind(args) });
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

/** Compiled statements by (dialect, shape); bounded, so a caller that invents column lists cannot grow memory. */
const shapes = boundedCache<string, ReturnType<typeof compileWithSlots<unknown>>>(500);

/** Compiles (once per dialect and shape) and runs a statement whose SQL depends only on `shape`; `values` fill its placeholders in order. */
async function runShaped<DBT>(
  executor: Kysely<DBT>,
  shape: string,
  values: readonly unknown[],
  build: (ph: string[]) => Compilable<unknown>,
): Promise<QueryResult<unknown>> {
  assertWritable(executor);
  const dialect = dialects.get(executor);
  const key = `${dialect}\u0000${shape}`;
  let c = dialect ? shapes.get(key) : undefined;
  if (!c) {
    c = compileWithSlots(values.length, (...ph) => build(ph));
    if (dialect) shapes.set(key, c);
  }
  const direct = directRunners.get(executor);
  if (direct) return direct(c.compiled.sql, c.bind(values));
  return executor.executeQuery({ ...c.compiled, parameters: c.bind(values) });
}

/** True for values bound as plain parameters; anything else (an SQL expression such as `sql\`...\``) is part of the statement's text. */
function plain(v: unknown): boolean {
  return v === null || typeof v !== 'object' || Buffer.isBuffer(v) || v instanceof Date;
}

/** The columns of a row object that carry a value (Kysely leaves out undefined values; so does this). */
function columnsOf(row: object): string[] {
  return Object.keys(row).filter((col) => (row as Record<string, unknown>)[col] !== undefined);
}

/** Inserts one row on `executor`, compiled once per (dialect, table, column list), bound exactly as Kysely would bind it. */
export async function insertRow<DBT, T extends keyof DBT & string>(executor: Kysely<DBT>, table: T, row: Insertable<DBT[T]>): Promise<void> {
  const cols = columnsOf(row);
  const values = cols.map((col) => (row as Record<string, unknown>)[col]);
  if (!values.every(plain)) {
    assertWritable(executor);
    await executor
      .insertInto(table)
      .values(row as never)
      .execute();
    return;
  }
  await runShaped(executor, `insert\u0000${table}\u0000${cols.join(',')}`, values, (ph) =>
    executor.insertInto(table).values(Object.fromEntries(cols.map((col, i) => [col, ph[i]])) as never),
  );
}

/**
 * `update table set <set> where <col> = <value> and ...` on `executor`, compiled once per (dialect,
 * table, set columns, where columns); returns the number of rows changed.
 */
export async function updateWhere<DBT, T extends keyof DBT & string>(
  executor: Kysely<DBT>,
  table: T,
  set: Updateable<DBT[T]>,
  where: Readonly<Record<string, string | number>>,
): Promise<number> {
  const setCols = columnsOf(set);
  const whereCols = Object.keys(where);
  const values = [...setCols.map((col) => (set as Record<string, unknown>)[col]), ...whereCols.map((col) => where[col])];
  const untyped = executor as unknown as Kysely<Record<string, Record<string, unknown>>>;
  if (!values.every(plain)) {
    assertWritable(executor);
    // An expression in the patch is SQL text, not a value: built and compiled for this call only.
    let q = untyped.updateTable(table as string).set(set as Record<string, unknown>);
    for (const col of whereCols) q = q.where(col, '=', where[col]);
    return Number((await q.executeTakeFirst()).numUpdatedRows);
  }
  const res = await runShaped(executor, `update\u0000${table}\u0000${setCols.join(',')}\u0000${whereCols.join(',')}`, values, (ph) => {
    // The generic table type defeats Kysely's typing of set() and where(); the shapes are checked by the callers' types.
    let q = untyped.updateTable(table as string).set(Object.fromEntries(setCols.map((col, i) => [col, ph[i]])));
    whereCols.forEach((col, i) => {
      q = q.where(col, '=', ph[setCols.length + i]);
    });
    return q;
  });
  return Number(res.numAffectedRows ?? 0);
}

/**
 * A write that follows a change only when the change matched (updateThen): rows to insert, or an
 * update of another table whose `where` names columns and values (null: `is null`).
 */
export type Then<DBT> =
  | { insert: keyof DBT & string; rows: readonly object[] }
  | { update: keyof DBT & string; set: object; where: Readonly<Record<string, string | number | null>> };

/**
 * `update table set <set> where <where>` and, only when that changed a row, the writes of `then`
 * in order, on `executor`; returns the number of rows changed. `where` must name at most one row (a
 * key). On PostgreSQL one statement, data-modifying CTEs (`with changed as (update ... returning 1),
 * then0 as (insert ... select ... from changed), then1 as (update ... where exists (select from
 * changed)) select from changed`): one round trip, atomic without a transaction of its own. On
 * SQLite (in-process, where a statement costs no round trip) the statements one by one, in the
 * caller's transaction. Compiled once per (dialect, shape) like updateWhere. The writes of `then`
 * must not change the row the update changes: in one PostgreSQL statement every part sees the
 * snapshot from before it, and a row changed twice keeps one change.
 */
export async function updateThen<DBT, T extends keyof DBT & string>(
  executor: Kysely<DBT>,
  table: T,
  set: Updateable<DBT[T]>,
  where: Readonly<Record<string, string | number>>,
  then: readonly Then<DBT>[],
): Promise<number> {
  if (dialects.get(executor) !== 'postgres') {
    const changed = await updateWhere(executor, table, set, where);
    if (changed === 0) return 0;
    for (const t of then) {
      if ('insert' in t) for (const row of t.rows) await insertRow(executor, t.insert, row as Insertable<DBT[typeof t.insert]>);
      else {
        const values = valuesOf(t as Write);
        if (values.every(plain))
          await runShaped(executor, `update-then\u0000${shapeOf(t as Write)}`, values, (ph) => updateOf(executor, t as UpdateWrite, ph, 0));
        else {
          assertWritable(executor);
          await updateOf(executor, t as UpdateWrite, values, 0).execute();
        }
      }
    }
    return changed;
  }
  const head: UpdateWrite = { update: table, set, where };
  // One insert per row: each selects its values from `changed`, so PostgreSQL types them by their columns.
  const writes: Write[] = [head];
  for (const t of then as readonly Write[]) {
    if ('insert' in t) for (const row of t.rows) writes.push({ insert: t.insert, rows: [row] });
    else writes.push(t);
  }
  const values = writes.flatMap(valuesOf);
  const untyped = executor as unknown as Kysely<Record<string, Record<string, unknown>>>;
  // `args` are the values themselves, or the placeholders of a compiled shape, in the order of `values`.
  const build = (args: readonly unknown[]) => {
    let at = valuesOf(head).length;
    let q = untyped.with('changed', () => updateOf(executor, head, args, 0).returning(sql<number>`1`.as('one')));
    writes.slice(1).forEach((t, k) => {
      const from = at;
      at += valuesOf(t).length;
      q = q.with(`then${k}`, (db) => {
        if ('update' in t) return updateOf(executor, t, args, from).where(sql<boolean>`exists (select from changed)`);
        const cols = columnsOf(t.rows[0]!);
        return db
          .insertInto(t.insert)
          .columns(cols)
          .expression((eb) => eb.selectFrom('changed').select(cols.map((col, i) => eb.val(args[from + i]).as(col))));
      }) as unknown as typeof q;
    });
    return q.selectFrom('changed').select('one');
  };
  if (!values.every(plain)) {
    assertWritable(executor);
    // An expression in the patch is SQL text, not a value: built and compiled for this call only.
    return (await build(values).execute()).length;
  }
  const res = await runShaped(executor, `update-then\u0000${writes.map(shapeOf).join('\u0000')}`, values, (ph) => build(ph));
  return res.rows.length;
}

/** One write of updateThen, untyped. */
type UpdateWrite = { update: string; set: object; where: Readonly<Record<string, unknown>> };
type Write = { insert: string; rows: readonly object[] } | UpdateWrite;

/** The values one write of updateThen binds, in order: set then where (an insert: its one row). */
function valuesOf(t: Write): unknown[] {
  if ('insert' in t) return t.rows.flatMap((row) => columnsOf(row).map((col) => (row as Record<string, unknown>)[col]));
  const where = t.where as Record<string, unknown>;
  return [
    ...columnsOf(t.set).map((col) => (t.set as Record<string, unknown>)[col]),
    ...Object.keys(where)
      .filter((col) => where[col] !== null)
      .map((col) => where[col]),
  ];
}

/** What decides the SQL text of one write of updateThen. */
function shapeOf(t: Write): string {
  if ('insert' in t) return `insert ${t.insert} ${t.rows.map((row) => columnsOf(row).join(',')).join(';')}`;
  const where = t.where as Record<string, unknown>;
  return `update ${t.update} ${columnsOf(t.set).join(',')} ${Object.keys(where)
    .map((col) => (where[col] === null ? `${col} null` : col))
    .join(',')}`;
}

/** The update of one write of updateThen, its set and where values taken from `args` from `from` on (null where values: `is null`). */
function updateOf(executor: object, t: UpdateWrite, args: readonly unknown[], from: number) {
  const untyped = executor as unknown as Kysely<Record<string, Record<string, unknown>>>;
  const setCols = columnsOf(t.set);
  const where = t.where as Record<string, unknown>;
  let q = untyped.updateTable(t.update).set(Object.fromEntries(setCols.map((col, i) => [col, args[from + i]])));
  let at = from + setCols.length;
  for (const col of Object.keys(where)) q = where[col] === null ? q.where(col, 'is', null) : q.where(col, '=', args[at++]);
  return q;
}
