import { boundedCache, cached } from '../cache.js';
import { StoreMisuse } from './guards.js';
import { openConnection, type Connection, type SqliteDriverName, type Statement } from './sqlite-driver.js';

/** Prepared statements kept per connection, by SQL text. */
const MAX_STATEMENTS = 500;

/**
 * Kysely prepares every statement anew; preparing costs more than running a small query, so keep
 * the prepared statements by SQL text (bounded). Safe because Kysely runs one query at a time on
 * the single SQLite connection. `beforeWrite` is called before a statement that is not a plain
 * read (a write, `insert ... returning`, or transaction control such as COMMIT) is handed out; the
 * statement runs at once after that, since Kysely's SQLite driver is synchronous underneath. Such
 * a statement outside a transaction is refused: writes go through `database.tx`, which holds one
 * open (this catches raw SQL writes on the read handle, which its query-kind check lets through).
 */
export function withStatementCache(conn: Connection, opts: { max?: number; beforeWrite?: () => void } = {}) {
  const statements = boundedCache<string, Statement>(opts.max ?? MAX_STATEMENTS);
  return {
    close: () => conn.close(),
    prepare: (text: string) => {
      const stmt = cached(statements, text, () => conn.prepare(text));
      if (!(stmt.reader && stmt.readonly)) {
        if (!conn.inTransaction) throw new StoreMisuse('a write outside database.tx (SQLite): write through database.tx(fn), on the handle fn gets');
        opts.beforeWrite?.();
      }
      return stmt;
    },
  };
}

/**
 * Runs compiled SQL through the statement cache as Kysely's SQLite driver would (same statements,
 * same result shape), for the statements of a transaction that holds the connection (prepared.ts).
 */
export function directRunner(cache: ReturnType<typeof withStatementCache>) {
  return (text: string, parameters: readonly unknown[]) => {
    const stmt = cache.prepare(text);
    if (stmt.reader) return { rows: stmt.all(parameters) };
    const { changes, lastInsertRowid } = stmt.run(parameters);
    return { numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid), rows: [] };
  };
}

/**
 * A read-only side connection for precompiled hot reads (WAL lets it read while the main one
 * writes). The reads of one event-loop turn share one read transaction: starting and ending a
 * transaction is most of what a one-row read costs in a busy server (two file-lock system calls
 * and the WAL-index check, about two thirds of the read: measured), and a turn answers many
 * requests at once under load. The shared snapshot ends when the turn ends (setImmediate) and
 * whenever this process writes (`endSnapshot`, called by the main connection before any write), so
 * a read never misses a commit this process made before it. A commit by another process (the CLI)
 * is seen from the next turn on: every request of a turn had arrived before the turn began reading.
 *
 * Rows are plain objects of each statement's own result columns (sqlite-driver.ts). When a
 * snapshot begins under a schema other than the last one (a newer process migrated, this one
 * altered a table), every statement is prepared again, so a `select *` builds rows with the
 * columns it now has.
 */
export function openReader(file: string, driver?: SqliteDriverName) {
  const conn = openConnection(file, { readonly: true, driver });
  conn.exec('PRAGMA busy_timeout = 10000');
  const statements = boundedCache<string, Statement>(MAX_STATEMENTS);
  const begin = conn.prepare('BEGIN');
  const commit = conn.prepare('COMMIT');
  const schemaVersion = conn.prepare('PRAGMA schema_version');
  const loadSchema = conn.prepare('SELECT count(*) FROM sqlite_master');
  let schema: unknown;
  let open = false;
  const endSnapshot = (): void => {
    if (!open) return;
    open = false;
    if (conn.inTransaction) commit.run();
  };
  const read = (text: string, params: readonly unknown[]): unknown[] => {
    if (!open) {
      begin.run();
      open = true;
      setImmediate(endSnapshot);
      // Read inside the snapshot, so the statements of this turn match the schema they read under.
      const now = schemaVersion.value();
      if (now !== schema) {
        // Running a statement makes SQLite load the new schema; preparing alone would use the old one.
        loadSchema.value();
        statements.clear();
        schema = now;
      }
    }
    return cached(statements, text, () => conn.prepare(text)).all(params);
  };
  return { conn, read, endSnapshot };
}
