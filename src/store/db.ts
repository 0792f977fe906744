import { mkdirSync } from 'node:fs';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect, sql } from 'kysely';
import pg from 'pg';
import { randomId } from '../ids.js';
import type { DB } from './schema.js';
import { registerDialect, registerFastReader } from './prepared.js';
import { startCheckpointer } from './checkpointer.js';
import { groupCommit } from './group-commit.js';
import { openReader, withStatementCache } from './sqlite-reader.js';

export type Dialect = 'sqlite' | 'postgres';

/** A database handle: the query builder plus a transaction helper that behaves the same on both dialects. */
export interface Database {
  db: Kysely<DB>;
  dialect: Dialect;
  /**
   * Runs fn in one transaction (SQLite: BEGIN IMMEDIATE, so a read-then-write never works on a stale
   * snapshot; callers of one event-loop turn share a commit, each in its own savepoint: group-commit.ts).
   */
  tx<T>(fn: (trx: Kysely<DB>) => Promise<T>): Promise<T>;
  /**
   * Runs a write that needs no transaction of its own (one statement, or several that may commit
   * apart): on SQLite it joins the next group commit, since a commit of its own writes the WAL
   * every time; on PostgreSQL it runs as is (autocommit, no BEGIN/COMMIT round trips). Resolves
   * only once it is committed, like tx.
   */
  write<T>(fn: (db: Kysely<DB>) => Promise<T>): Promise<T>;
  /** Inside tx: serialises callers on `name` until the transaction ends (PostgreSQL advisory lock; SQLite already holds the write lock). */
  lock(trx: Kysely<DB>, name: string): Promise<void>;
  close(): Promise<void>;
}

// int8 (bigint) and numeric come back as strings by default; our values fit in a double.
pg.types.setTypeParser(20, (v) => Number.parseInt(v, 10));

function openSqlite(file: string): Database {
  if (file !== ':memory:') mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  const conn = new SqliteDatabase(file);
  conn.pragma('journal_mode = WAL');
  conn.pragma('synchronous = NORMAL');
  conn.pragma('busy_timeout = 10000');
  conn.pragma('foreign_keys = ON');
  conn.pragma('temp_store = MEMORY');
  // Checkpoints run on a worker thread; SQLite's own, on this connection, only past ~80 MB of WAL.
  const checkpointer = file === ':memory:' ? undefined : startCheckpointer(file);
  if (checkpointer) conn.pragma('wal_autocheckpoint = 20000');
  const reader = file === ':memory:' ? undefined : openReader(file);
  // Every write of this process ends the reader's shared snapshot, so later reads see it.
  const db = new Kysely<DB>({ dialect: new SqliteDialect({ database: withStatementCache(conn, { beforeWrite: reader?.endSnapshot }) }) });
  if (reader) registerFastReader(db, reader.read);
  registerDialect(db, 'sqlite');
  const tx = groupCommit(db, conn, (c) => registerDialect(c, 'sqlite'), reader?.endSnapshot);
  return {
    db,
    dialect: 'sqlite',
    tx,
    write: tx,
    lock: async () => {},
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

function openPostgres(url: string, poolSize: number, prepared: boolean): Database {
  const pool = new pg.Pool({ connectionString: url, max: poolSize });
  // An idle connection the server ends (restart, failover, an administrator, a dropped database)
  // is reported on the pool; without a listener that report would crash the process. The pool
  // discards the connection and opens a new one when next needed.
  pool.on('error', () => {});
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
  registerDialect(db, 'postgres');
  if (prepared) registerFastReader(db, namedStatements(pool));
  return {
    db,
    dialect: 'postgres',
    tx: (fn) =>
      db.transaction().execute((trx) => {
        registerDialect(trx, 'postgres');
        return fn(trx);
      }),
    write: (fn) => fn(db),
    lock: async (trx, name) => {
      await sql`select pg_advisory_xact_lock(${String(lockKey(name))}::bigint)`.execute(trx);
    },
    close: () => db.destroy(),
  };
}

/** Opens `sqlite:<path>` (or `sqlite::memory:`) or a `postgres://` URL. */
export function openDatabase(url: string, opts: { poolSize?: number; prepared?: boolean } = {}): Database {
  if (url.startsWith('sqlite:')) return openSqlite(url.slice('sqlite:'.length));
  if (/^postgres(ql)?:\/\//.test(url)) return openPostgres(url, opts.poolSize ?? 10, opts.prepared ?? true);
  throw new Error(`unsupported database URL ${url}: use sqlite:<path> or postgres://`);
}
