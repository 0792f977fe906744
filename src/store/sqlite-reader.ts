import SqliteDatabase from 'better-sqlite3';

/**
 * Kysely prepares every statement anew; preparing costs more than running a small query, so keep
 * the prepared statements by SQL text (bounded). Safe because Kysely runs one query at a time on
 * the single SQLite connection. `beforeWrite` is called before a statement that is not a plain
 * read (a write, `insert ... returning`, or transaction control such as COMMIT) is handed out; the
 * statement runs at once after that, since Kysely's SQLite driver is synchronous underneath.
 */
export function withStatementCache(conn: SqliteDatabase.Database, opts: { max?: number; beforeWrite?: () => void } = {}) {
  const max = opts.max ?? 500;
  const cache = new Map<string, SqliteDatabase.Statement>();
  return {
    close: () => conn.close(),
    prepare: (text: string) => {
      let stmt = cache.get(text);
      if (!stmt) {
        stmt = conn.prepare(text);
        if (cache.size >= max) cache.delete(cache.keys().next().value!);
        cache.set(text, stmt);
      }
      if (opts.beforeWrite && !(stmt.reader && stmt.readonly)) opts.beforeWrite();
      return stmt;
    },
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
 */
export function openReader(file: string) {
  const conn = new SqliteDatabase(file, { readonly: true, fileMustExist: true });
  conn.pragma('busy_timeout = 10000');
  const statements = new Map<string, (params: readonly unknown[]) => unknown[]>();
  const statementOf = (text: string) => {
    let run = statements.get(text);
    if (!run) {
      const stmt = conn.prepare(text);
      // A `select *` may have other columns after a newer process migrated (SQLite prepares it
      // again by itself): it keeps better-sqlite3's own row objects.
      if (/\*\s+from\s/i.test(text)) run = (params) => stmt.all(...params);
      else {
        const toRow = rowBuilder(stmt.columns().map((c) => c.name));
        stmt.raw(true);
        run = (params) => (stmt.all(...params) as unknown[][]).map(toRow);
      }
      if (statements.size >= 500) statements.delete(statements.keys().next().value!);
      statements.set(text, run);
    }
    return run;
  };
  const begin = conn.prepare('BEGIN');
  const commit = conn.prepare('COMMIT');
  const results = resultCache(conn);
  let open = false;
  const endSnapshot = (): void => {
    results.recheck();
    if (!open) return;
    open = false;
    if (conn.inTransaction) commit.run();
  };
  const uncached = (text: string, params: readonly unknown[]): unknown[] => {
    if (!open) {
      begin.run();
      open = true;
      setImmediate(endSnapshot);
    }
    return statementOf(text)(params);
  };
  const read = (text: string, params: readonly unknown[], opts?: { cached?: boolean }): unknown[] =>
    opts?.cached ? results.get(text, params, () => uncached(text, params)) : uncached(text, params);
  return { conn, read, endSnapshot };
}

/** Most results `resultCache` keeps; past it the cache starts again empty. */
const MAX_CACHED_RESULTS = 10_000;

/**
 * The results of reads asked for with `cached`, kept while the database has not changed. SQLite's
 * `data_version` (of this read connection) changes whenever another connection commits: this
 * process's main connection, the CLI, another process on the same file. It is read once per
 * event-loop turn and again after each commit of this process (`recheck`), before any kept result
 * is used; a result missing is read after that check, so it is never older than the version it is
 * kept under, and it is served only while that version is still current. The rows are frozen:
 * callers share them. A hit costs the turn's one `data_version` read and a map lookup instead of
 * the read and its snapshot (a balance poll: measured in decision 0013).
 */
function resultCache(conn: SqliteDatabase.Database) {
  const dataVersion = conn.prepare('PRAGMA data_version').pluck();
  const kept = new Map<string, unknown[]>();
  let version: unknown;
  let checked = false;
  const recheck = (): void => {
    checked = false;
  };
  return {
    recheck,
    get(text: string, params: readonly unknown[], run: () => unknown[]): unknown[] {
      if (!checked) {
        checked = true;
        setImmediate(recheck);
        const now = dataVersion.get();
        if (now !== version) {
          kept.clear();
          version = now;
        }
      }
      const key = `${text}\u0000${JSON.stringify(params)}`;
      let rows = kept.get(key);
      if (!rows) {
        rows = Object.freeze(run().map((r) => Object.freeze(r))) as unknown[];
        if (kept.size >= MAX_CACHED_RESULTS) kept.clear();
        kept.set(key, rows);
      }
      return rows;
    },
  };
}

/**
 * Turns a row read as an array of values into an object with these column names. better-sqlite3
 * builds row objects in C++, making each column name a V8 string and setting it by name for every
 * row (as much as the read itself in a one-row lookup: measured); reading arrays and building the
 * object here, with one object literal of a fixed shape per statement, costs a fraction of that.
 * The names are the statement's own result columns, written as JSON string literals.
 */
function rowBuilder(names: string[]): (values: unknown[]) => unknown {
  const body = `return {${names.map((n, i) => `${JSON.stringify(n)}: v[${i}]`).join(', ')}};`;
  return new Function('v', body) as (values: unknown[]) => unknown;
}
