import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { Kysely, PostgresDialect, SqliteDialect, sql } from 'kysely';
import pg from 'pg';
import { randomId } from '../ids.js';
import type { DB } from './schema.js';
import { registerDialect, registerDirect, registerFastReader } from './prepared.js';
import { startCheckpointer } from './checkpointer.js';
import { groupCommit } from './group-commit.js';
import { directRunner, openReader, withStatementCache } from './sqlite-reader.js';
import { isBusy, openConnection, WRITER_PRAGMAS, type Connection, type SqliteDriverName } from './sqlite-driver.js';
import { currentTx, holdScopes, nestedTx, readHandle, runInTx, warnSlow, type SlowWatch } from './guards.js';

export type Dialect = 'sqlite' | 'postgres';

/** What a transaction may skip: `atomic: false` for statements that need not commit together. */
export interface TxOptions {
  /**
   * false: the statements of fn need not commit together (one statement, or several that may
   * commit apart). On SQLite nothing changes (fn joins the group commit like any transaction: a
   * commit of its own would write the WAL every time); on PostgreSQL fn runs in autocommit, without
   * the BEGIN and COMMIT round trips. Either way the promise settles only once fn's writes are
   * committed, and the guard rails hold inside fn.
   */
  atomic?: boolean;
  /** true: known to run long while nothing else writes (migrations at start), so not reported as slow. */
  long?: boolean;
}

/**
 * A database handle. Reads outside transactions use `db`; every write goes through `tx` (one API:
 * a write on `db`, a query on `db` from inside `tx`, and a `tx` inside a `tx` throw on both
 * dialects). src/store/README.md says what each path sees and may await.
 */
export interface Database {
  /** The read handle: Kysely for reads outside transactions (a write on it throws). */
  db: Kysely<DB>;
  dialect: Dialect;
  /**
   * Runs fn in one transaction on the handle it passes (SQLite: BEGIN IMMEDIATE, so a read-then-write
   * never works on a stale snapshot; callers of one event-loop turn share a commit, each in its own
   * savepoint: group-commit.ts). Precompiled reads of `db` called inside fn run on the transaction.
   * fn must await only the database: on SQLite it holds the one connection of every writer.
   */
  tx<T>(fn: (trx: Kysely<DB>) => Promise<T>, opts?: TxOptions): Promise<T>;
  /** Inside tx: serialises callers on `name` until the transaction ends (PostgreSQL advisory lock; SQLite already holds the write lock). */
  lock(trx: Kysely<DB>, name: string): Promise<void>;
  /** What this process has written so far (metrics, the in-flight bench): `tx` calls, and on SQLite the rows changed (PostgreSQL counts those itself: pg_stat_database). */
  writes(): WriteStats;
  /**
   * SQLite only: writes a consistent copy of the database to `file` while writers go on
   * (`VACUUM INTO`, one read transaction; plain SQL, so any SQLite driver runs it; decision 2601).
   */
  snapshot?(file: string): Promise<void>;
  close(): Promise<void>;
}

/** Counters of a Database's writes since it was opened. */
export interface WriteStats {
  /** Calls of `tx` (each a write transaction, or on PostgreSQL with `atomic: false` one autocommit run). */
  transactions: number;
  /** SQLite: rows inserted, updated or deleted on the write connection (`total_changes()`); null on PostgreSQL. */
  rows: number | null;
}

/** Options of openDatabase. */
export interface OpenOptions {
  /** PostgreSQL pool size. */
  poolSize?: number;
  /** PostgreSQL named prepared statements for precompiled reads (DATABASE_PREPARED). */
  prepared?: boolean;
  /** Report transactions that hold their connection longer than this many ms (0: off; services set 50 outside production). */
  slowTxMs?: number;
  /** Where a slow transaction is reported (default: a process warning). */
  onSlowTx?: (heldMs: number, transactions: number) => void;
  /** The clock of the slow-transaction watch (tests). */
  now?: () => number;
  /**
   * Track which code runs inside a transaction, so that a nested tx, a query on `db` or a
   * precompiled read inside one throws (guards.ts; DATABASE_GUARDS, default on outside production).
   * Off, those mistakes are not caught and every transaction saves the tracking's cost.
   */
  guards?: boolean;
  /** The SQLite library (tests and the bench compare the two); default: node:sqlite where the runtime has it (sqlite-driver.ts). */
  sqliteDriver?: SqliteDriverName;
}

/** Runs a transaction's body: inside a tracked scope with the guards on, as is with them off. */
type Body = <T>(owner: object, trx: Kysely<DB>, fn: () => Promise<T>) => Promise<T>;
const untracked: Body = (_owner, _trx, fn) => fn();

// int8 (bigint) and numeric come back as strings by default; our values fit in a double.
pg.types.setTypeParser(20, (v) => Number.parseInt(v, 10));

/**
 * Switches the connection to WAL. On a new file, processes starting at once (`gengate migrate`,
 * an API and a worker) race for this switch, and SQLite answers the losers SQLITE_BUSY at once:
 * the busy timeout does not cover it. Try again for up to 10 s.
 */
function enableWal(conn: Connection): void {
  const until = Date.now() + 10_000;
  for (;;) {
    try {
      conn.exec('PRAGMA journal_mode = WAL');
      return;
    } catch (e) {
      if (!isBusy(e) || Date.now() > until) throw e;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20); // opening is synchronous: a short blocking pause
    }
  }
}

function openSqlite(file: string, slow: SlowWatch, guards: boolean, driver?: SqliteDriverName): Database {
  if (file !== ':memory:') mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  const conn = openConnection(file, { driver });
  enableWal(conn);
  conn.exec(WRITER_PRAGMAS); // the same settings whichever library opened the file
  // Checkpoints run on a worker thread; SQLite's own, on this connection, only past ~80 MB of WAL.
  const checkpointer = file === ':memory:' ? undefined : startCheckpointer(file, conn.driver);
  if (checkpointer) conn.exec('PRAGMA wal_autocheckpoint = 20000');
  const reader = file === ':memory:' ? undefined : openReader(file, conn.driver);
  // Every write of this process ends the reader's shared snapshot, so later reads see it.
  const statements = withStatementCache(conn, { beforeWrite: reader?.endSnapshot });
  const inner = new Kysely<DB>({ dialect: new SqliteDialect({ database: statements }) });
  const direct = directRunner(statements);
  const db = readHandle(inner);
  if (reader) registerFastReader(db, reader.read);
  registerDialect(db, 'sqlite');
  const tx = groupCommit(inner, conn, {
    prepare: (c) => {
      registerDialect(c, 'sqlite');
      registerDirect(c, direct);
    },
    beforeCommit: reader?.endSnapshot,
    run: guards ? (c, fn) => runInTx(db, c, () => fn(c)) : (c, fn) => fn(c),
    slow,
    hold: guards ? holdScopes : undefined,
  });
  const changes = conn.prepare('select total_changes() as n');
  let transactions = 0;
  return {
    db,
    dialect: 'sqlite',
    tx: (fn, opts) => (currentTx(db) ? Promise.reject(nestedTx()) : (transactions++, tx(fn, opts?.long))),
    lock: async () => {},
    writes: () => ({ transactions, rows: Number(changes.value()) }),
    snapshot: async (to) => {
      // VACUUM cannot run inside a transaction: wait for a turn with none open on this connection.
      while (conn.inTransaction) await new Promise((resolve) => setImmediate(resolve));
      conn.prepare('vacuum into ?').run([to]);
    },
    close: async () => {
      await checkpointer?.stop();
      reader?.endSnapshot();
      reader?.conn.close();
      await db.destroy();
    },
  };
}

/** A 63-bit advisory lock key from a name (stable across processes). */
function lockKey(name: string): bigint {
  let h = 1469598103934665603n;
  for (const ch of Buffer.from(name)) h = ((h ^ BigInt(ch)) * 1099511628211n) & 0x7fffffffffffffffn;
  return h;
}

/**
 * Precompiled reads as named prepared statements: PostgreSQL parses and plans each once per
 * connection instead of on every call (server CPU, which shares the machine with us). A statement
 * the server no longer accepts as prepared (the schema changed under it: a newer process migrated)
 * is run unnamed once and prepared again under a new name on next use. Names carry a per-process
 * prefix, so processes never meet each other's names on a shared server connection. Behind a pooler
 * that moves sessions between server connections (PgBouncer in transaction mode before 1.21) named
 * statements cannot work: DATABASE_PREPARED=false turns them off.
 */
function namedStatements(pool: pg.Pool) {
  const names = new Map<string, string>();
  const prefix = `${randomId('gg_', 6)}_`;
  let next = 0;
  const nameOf = (text: string) => {
    let name = names.get(text);
    if (!name) {
      name = `${prefix}${next++}`;
      names.set(text, name);
    }
    return name;
  };
  return async (text: string, values: readonly unknown[]): Promise<unknown[]> => {
    try {
      return (await pool.query({ name: nameOf(text), text, values: values as unknown[] })).rows;
    } catch (e) {
      const code = (e as { code?: string }).code;
      // 0A000: "cached plan must not change result type"; 26000: the statement is gone; 42P05: the name is taken.
      if (code !== '0A000' && code !== '26000' && code !== '42P05') throw e;
      names.delete(text);
      return (await pool.query({ text, values: values as unknown[] })).rows;
    }
  };
}

function openPostgres(url: string, poolSize: number, prepared: boolean, slow: SlowWatch, guards: boolean): Database {
  const inTx: Body = guards ? runInTx : untracked;
  const pool = new pg.Pool({ connectionString: url, max: poolSize });
  // An idle connection the server ends (restart, failover, an administrator, a dropped database)
  // is reported on the pool; without a listener that report would crash the process. The pool
  // discards the connection and opens a new one when next needed.
  pool.on('error', () => {});
  const inner = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
  registerDialect(inner, 'postgres');
  const db = readHandle(inner);
  registerDialect(db, 'postgres');
  if (prepared) registerFastReader(db, namedStatements(pool));
  /** Runs fn as db's transaction body on `trx` and reports it when it held its connection too long. */
  const body = async <T>(trx: Kysely<DB>, fn: (trx: Kysely<DB>) => Promise<T>, long = false): Promise<T> => {
    const watch = slow.ms > 0 && !long;
    const start = watch ? slow.now() : 0;
    try {
      return await inTx(db, trx, () => fn(trx));
    } finally {
      if (watch && slow.now() - start > slow.ms) slow.onSlow(slow.now() - start, 1);
    }
  };
  let transactions = 0;
  return {
    db,
    dialect: 'postgres',
    writes: () => ({ transactions, rows: null }),
    tx: (fn, opts) => {
      if (currentTx(db)) return Promise.reject(nestedTx());
      transactions++;
      if (opts?.atomic === false) return body(inner, fn, opts.long);
      return inner.transaction().execute((trx) => {
        registerDialect(trx, 'postgres');
        return body(trx, fn, opts?.long);
      });
    },
    lock: async (trx, name) => {
      await sql`select pg_advisory_xact_lock(${String(lockKey(name))}::bigint)`.execute(trx);
    },
    close: () => db.destroy(),
  };
}

/** Opens `sqlite:<path>` (or `sqlite::memory:`) or a `postgres://` URL. */
export function openDatabase(url: string, opts: OpenOptions = {}): Database {
  const slow: SlowWatch = { ms: opts.slowTxMs ?? 0, onSlow: opts.onSlowTx ?? warnSlow, now: opts.now ?? (() => performance.now()) };
  const guards = opts.guards ?? true;
  if (url.startsWith('sqlite:')) return openSqlite(url.slice('sqlite:'.length), slow, guards, opts.sqliteDriver);
  if (/^postgres(ql)?:\/\//.test(url)) return openPostgres(url, opts.poolSize ?? 10, opts.prepared ?? true, slow, guards);
  throw new Error(`unsupported database URL ${url}: use sqlite:<path> or postgres://`);
}
