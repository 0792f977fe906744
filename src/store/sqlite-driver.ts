import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';

/**
 * The one seam between the store and an SQLite library (decision 2400). Where the runtime has its
 * own SQLite with what the store needs (`node:sqlite` on Node 22.16 and later, 24, 26), it is used:
 * it is part of the runtime, so an install compiles nothing and nothing outside Node's own objects
 * can abort the process at exit. better-sqlite3 (an optional dependency, installed only on Node
 * 20) is loaded only on a runtime without it. Both give the same surface: statements that take
 * their parameters as one array, rows as plain objects of the statement's own result columns, and
 * whether a statement returns rows (`reader`) and whether it changes nothing (`readonly`, SQLite's
 * own sqlite3_stmt_readonly).
 */
export type SqliteDriverName = 'node:sqlite' | 'better-sqlite3';

/** What `run` reports. */
export interface RunResult {
  changes: number;
  lastInsertRowid: number | bigint;
}

/** A prepared statement. Parameters are positional (`?`), given as one array. */
export interface Statement {
  /** The statement returns rows (it has result columns). */
  readonly reader: boolean;
  /** The statement changes nothing: no write, no schema or journal change (transaction control counts as read-only, as in SQLite). */
  readonly readonly: boolean;
  /** Rows as plain objects of the statement's result columns. */
  all(params?: readonly unknown[]): unknown[];
  /** The first column of the first row; undefined when there is no row. */
  value(params?: readonly unknown[]): unknown;
  run(params?: readonly unknown[]): RunResult;
  iterate(params?: readonly unknown[]): IterableIterator<unknown>;
}

/** One SQLite connection. */
export interface Connection {
  readonly driver: SqliteDriverName;
  prepare(sql: string): Statement;
  /** Runs SQL text without results (pragmas, schema). */
  exec(sql: string): void;
  /** A transaction is open on this connection. */
  readonly inTransaction: boolean;
  /** Finalizes every statement of the connection and closes it; later calls do nothing. */
  close(): void;
}

export interface ConnectOptions {
  readonly?: boolean;
  /** Which library (tests and the bench compare the two); default: `defaultDriver()`. */
  driver?: SqliteDriverName;
  /** better-sqlite3 only: the compiled module to load, when it was built for another runtime than the install's (the bench compares the two drivers on one runtime). */
  nativeBinding?: string;
}

/**
 * The settings of the connection that writes, whichever library opened it (db.ts). better-sqlite3
 * compiles SQLite with a 16 MB page cache and node:sqlite keeps SQLite's 2 MB default: both get 16 MB.
 */
export const WRITER_PRAGMAS =
  'PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 10000; PRAGMA foreign_keys = ON; PRAGMA temp_store = MEMORY; PRAGMA cache_size = -16000';

const require = createRequire(import.meta.url);

/**
 * The part of `node:sqlite` the store uses (written out here: the Node 20 typings the code is
 * checked against, so that it uses nothing Node 20 lacks, do not have the module).
 */
interface NodeStatement {
  all(...params: unknown[]): unknown[];
  get(...params: unknown[]): unknown;
  run(...params: unknown[]): { changes: number | bigint; lastInsertRowid: number | bigint };
  iterate(...params: unknown[]): IterableIterator<unknown>;
  columns(): Array<{ name: string }>;
  setReturnArrays(on: boolean): void;
}
interface NodeDatabase {
  prepare(sql: string): NodeStatement;
  exec(sql: string): void;
  close(): void;
  readonly isTransaction: boolean;
}
interface NodeSqlite {
  DatabaseSync: { new (file: string, opts: { readOnly: boolean }): NodeDatabase; prototype: NodeDatabase };
  StatementSync: { prototype: NodeStatement } | undefined;
}
let nodeSqlite: NodeSqlite | null | undefined;

/**
 * `node:sqlite` when this runtime has it with the parts the store uses (rows as arrays, result
 * columns, the transaction flag), else null. Node 22 marks the module experimental and would print
 * a warning to the user's terminal when it loads: that one warning is kept back (the module is the
 * same code as on Node 24, where it is not marked).
 */
export function loadNodeSqlite(): NodeSqlite | null {
  if (nodeSqlite !== undefined) return nodeSqlite;
  const emit = process.emitWarning;
  process.emitWarning = function (this: unknown, warning: string | Error, ...rest: unknown[]) {
    if (/SQLite is an experimental feature/.test(String(warning))) return;
    return (emit as (...a: unknown[]) => void).call(process, warning, ...rest);
  } as typeof process.emitWarning;
  try {
    const m = require('node:sqlite') as NodeSqlite;
    const probe = new m.DatabaseSync(':memory:', { readOnly: false });
    // isTransaction is an accessor of each connection, not of the prototype.
    const complete =
      typeof m.StatementSync?.prototype.setReturnArrays === 'function' && typeof m.StatementSync?.prototype.columns === 'function' && 'isTransaction' in probe;
    probe.close();
    nodeSqlite = complete ? m : null;
  } catch {
    nodeSqlite = null; // Node 20: no such module
  } finally {
    process.emitWarning = emit;
  }
  return nodeSqlite;
}

/** The library this runtime uses: node:sqlite where it is complete, better-sqlite3 elsewhere. */
export function defaultDriver(): SqliteDriverName {
  return loadNodeSqlite() ? 'node:sqlite' : 'better-sqlite3';
}

/**
 * better-sqlite3 comes through `@gengate/sqlite-node20` (packages/sqlite-node20), an optional
 * dependency that npm installs only on the lines that need it (its engines, with the project's
 * engine-strict): an install on Node 22 and later compiles nothing.
 */
const BETTER = '@gengate/sqlite-node20';

/** The module path a worker thread loads better-sqlite3 from (checkpointer.ts). */
export function betterSqlitePath(): string {
  return (require(BETTER) as { modulePath: string }).modulePath;
}

function loadBetterSqlite(): typeof BetterSqlite3 {
  try {
    return require(BETTER) as typeof BetterSqlite3;
  } catch (e) {
    throw new Error(
      `SQLite needs better-sqlite3 on Node ${process.versions.node} (node:sqlite is complete from Node 22.16 on): reinstall with a C++ compiler available, or use Node 22.16 or later (${(e as Error).message})`,
      { cause: e },
    );
  }
}

/** SQLite answered SQLITE_BUSY (any of its extended codes), whichever library asked. */
export function isBusy(e: unknown): boolean {
  const err = e as { code?: unknown; errcode?: unknown };
  if (typeof err?.code === 'string' && err.code.startsWith('SQLITE_BUSY')) return true;
  return typeof err?.errcode === 'number' && (err.errcode & 0xff) === 5;
}

/** Opens a connection to `file` (`:memory:` too). */
export function openConnection(file: string, opts: ConnectOptions = {}): Connection {
  const driver = opts.driver ?? defaultDriver();
  if (driver === 'node:sqlite') {
    const m = loadNodeSqlite();
    if (!m) throw new Error(`node:sqlite is not complete on Node ${process.versions.node}`);
    return new NodeConnection(new m.DatabaseSync(file, { readOnly: opts.readonly ?? false }));
  }
  const Better = loadBetterSqlite();
  const nativeBinding = opts.nativeBinding ? { nativeBinding: opts.nativeBinding } : {};
  return new BetterConnection(new Better(file, opts.readonly ? { readonly: true, fileMustExist: true, ...nativeBinding } : nativeBinding));
}

/**
 * Builds a plain object from a row read as an array. Both libraries can build row objects
 * themselves, in C++, making each column name a V8 string and setting it by name for every row
 * (as much as the read itself in a one-row lookup; a task row of 27 columns: about 15 µs against
 * 6 µs on better-sqlite3, measured; node:sqlite's objects also have a null prototype). Reading
 * arrays and building the object here, with one object literal of a fixed shape per statement,
 * costs a fraction of that. The names are the statement's result columns, written as JSON strings.
 */
export function rowBuilder(names: readonly string[]): (values: unknown[]) => unknown {
  const body = `return {${names.map((n, i) => `${JSON.stringify(n)}: v[${i}]`).join(', ')}};`;
  return new Function('v', body) as (values: unknown[]) => unknown;
}

/** Opcodes whose presence makes SQLite call a statement not read-only (besides a write transaction). */
const WRITING_OPCODES = new Set(['JournalMode', 'Vacuum', 'IncrVacuum', 'VUpdate', 'VCreate', 'VDestroy', 'Checkpoint']);

export class NodeConnection implements Connection {
  readonly driver = 'node:sqlite' as const;
  private open = true;
  constructor(private readonly db: NodeDatabase) {}

  prepare(sql: string): Statement {
    const stmt = this.db.prepare(sql);
    const names = stmt.columns().map((c) => c.name);
    stmt.setReturnArrays(true);
    const build = rowBuilder(names);
    const db = this.db;
    let readonly: boolean | undefined;
    return {
      reader: names.length > 0,
      // node:sqlite does not expose sqlite3_stmt_readonly: SQLite's own program for the statement
      // says the same (a write transaction or a journal, vacuum or checkpoint step). Asked once per
      // statement, and the statements are cached by text.
      get readonly() {
        readonly ??= !(db.prepare(`EXPLAIN ${sql}`).all() as Array<{ opcode: string; p2: number }>).some(
          (op) => (op.opcode === 'Transaction' && op.p2 !== 0) || WRITING_OPCODES.has(op.opcode),
        );
        return readonly;
      },
      all: (params = []) => (stmt.all(...params) as unknown as unknown[][]).map(build),
      value: (params = []) => (stmt.get(...params) as unknown as unknown[] | undefined)?.[0],
      run: (params = []) => {
        const r = stmt.run(...params);
        return { changes: Number(r.changes), lastInsertRowid: r.lastInsertRowid };
      },
      iterate: function* (params = []) {
        for (const row of stmt.iterate(...params)) yield build(row as unknown as unknown[]);
      },
    };
  }

  exec(sql: string): void {
    this.db.exec(sql);
  }

  get inTransaction(): boolean {
    return this.db.isTransaction;
  }

  close(): void {
    if (!this.open) return;
    this.open = false;
    this.db.close(); // finalizes every statement prepared on it
  }
}

export class BetterConnection implements Connection {
  readonly driver = 'better-sqlite3' as const;
  constructor(private readonly db: BetterSqlite3.Database) {}

  prepare(sql: string): Statement {
    const stmt = this.db.prepare<unknown[]>(sql);
    const reader = stmt.reader;
    const build = reader ? rowBuilder(stmt.columns().map((c) => c.name)) : () => undefined;
    if (reader) stmt.raw(true);
    return {
      reader,
      readonly: stmt.readonly,
      all: (params = []) => (stmt.all(params) as unknown[][]).map(build),
      value: (params = []) => (stmt.get(params) as unknown[] | undefined)?.[0],
      run: (params = []) => {
        const r = stmt.run(params);
        return { changes: r.changes, lastInsertRowid: r.lastInsertRowid };
      },
      iterate: function* (params = []) {
        for (const row of stmt.iterate(params)) yield build(row as unknown[]);
      },
    };
  }

  exec(sql: string): void {
    this.db.exec(sql);
  }

  get inTransaction(): boolean {
    return this.db.inTransaction;
  }

  close(): void {
    if (this.db.open) this.db.close(); // finalizes every statement prepared on it
  }
}
