import { AsyncLocalStorage } from 'node:async_hooks';
import type { Kysely, KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from 'kysely';

/**
 * Guard rails of the store (src/store/README.md): the mistakes that deadlock, stall or read stale
 * rows on SQLite but pass on PostgreSQL fail loudly on both.
 */

/** The transaction a piece of code runs in, by async context; `open` ends when its function settles. */
interface TxScope {
  owner: object;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- any database schema: the guard and the statement cache work on every one
  trx: Kysely<any>;
  open: boolean;
}

const scopes = new AsyncLocalStorage<TxScope>();

/** Thrown for a misuse of the store: a programming error, never a client's. */
export class StoreMisuse extends Error {
  override name = 'StoreMisuse';
}

/** The open transaction of the database `owner` (its read handle) that the calling code runs inside, if any. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any database schema: the guard and the statement cache work on every one
export function currentTx(owner: object): Kysely<any> | undefined {
  const s = scopes.getStore();
  return s?.open && s.owner === owner ? s.trx : undefined;
}

/**
 * Runs fn as the body of a transaction of `owner` on `trx`. Code it starts and that outlives it
 * (a promise it did not await) counts as outside once fn has settled.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any database schema: the guard and the statement cache work on every one
export function runInTx<T>(owner: object, trx: Kysely<any>, fn: () => Promise<T>): Promise<T> {
  if (currentTx(owner)) return Promise.reject(nestedTx());
  const scope: TxScope = { owner, trx, open: true };
  const release = holdScopes();
  return scopes
    .run(scope, async () => {
      try {
        return await fn();
      } finally {
        scope.open = false;
      }
    })
    .finally(release);
}

let holders = 0;

/**
 * Keeps the tracking of transaction scopes on until the returned release is called. Node 20 runs
 * async hooks on every promise of the process while an AsyncLocalStorage is enabled (about 5 µs
 * of a 21 µs balance request: measured, decision 0016), so it is on only while a transaction (or a
 * group-commit batch) is open: with none open there is no scope to find anyway.
 */
export function holdScopes(): () => void {
  holders++;
  let released = false;
  return () => {
    if (released) return;
    released = true;
    if (--holders === 0) scopes.disable();
  };
}

/** The error of a precompiled read (`precompile`, `readByKey`) called inside a transaction of its database. */
export function readInTx(): StoreMisuse {
  return new StoreMisuse(
    "a precompiled read inside database.tx: it runs on a side connection that cannot see the transaction's writes; read on the transaction handle (trx) instead",
  );
}

/** The error of a `tx` asked for inside a transaction of the same database. */
export function nestedTx(): StoreMisuse {
  return new StoreMisuse(
    'database.tx called inside a transaction of the same database: pass the transaction handle (trx) down instead (on SQLite the inner one would wait for the outer one forever)',
  );
}

/** Query kinds the read handle runs; raw SQL is let through (SQLite's connection refuses raw writes outside a transaction). */
const READS = new Set(['SelectQueryNode', 'RawNode']);

const guarded = new WeakSet<object>();

/**
 * A database's read handle: the query builder for reads outside transactions. A write on it, or
 * any query on it from inside one of its transactions, throws when compiled (writes go through
 * `database.tx`; inside a transaction everything runs on `trx`, since on SQLite the read handle's
 * connection is the one the transaction holds, or a side connection that cannot see its writes).
 */
export function readHandle<DBT>(inner: Kysely<DBT>): Kysely<DBT> {
  let handle: Kysely<DBT> | undefined; // eslint-disable-line prefer-const -- assigned after the plugin that reads it is made
  const plugin: KyselyPlugin = {
    transformQuery({ node }: PluginTransformQueryArgs): RootOperationNode {
      if (handle && currentTx(handle))
        throw new StoreMisuse('a query on database.db inside database.tx: run it on the transaction handle (trx) the function got');
      if (!READS.has(node.kind)) throw new StoreMisuse(`database.db is for reads (${node.kind}): write through database.tx(fn), on the handle fn gets`);
      return node;
    },
    transformResult: async ({ result }: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> => result,
  };
  handle = inner.withPlugin(plugin);
  guarded.add(handle);
  return handle;
}

/** Refuses to run a precompiled write (`prepared`, `insertRow`, `updateWhere`) on a read handle; compiled statements skip its plugin. */
export function assertWritable(executor: object): void {
  if (guarded.has(executor)) throw new StoreMisuse('a write on database.db: write through database.tx(fn), on the handle fn gets');
}

/** How long a transaction (SQLite: a group-commit batch) may hold its connection before `onSlow` hears of it. */
export interface SlowWatch {
  /** Milliseconds; 0 turns the watch off. */
  ms: number;
  onSlow(heldMs: number, transactions: number): void;
  now(): number;
}

/** The default report of a slow transaction: a process warning (printed on stderr, seen by test runners). */
export function warnSlow(heldMs: number, transactions: number): void {
  process.emitWarning(
    `a database transaction held its connection for ${Math.round(heldMs)} ms (${transactions} in the batch): every other writer of this process waited; keep awaits inside database.tx to the database`,
    'SlowTransactionWarning',
  );
}
