import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { it } from 'vitest';
import { needs } from './tools.js';
import { MIGRATIONS, migrate, openDatabase, type Database, type OpenOptions } from '../../src/store/index.js';

/** A fresh, empty database for one test file. */
export interface TestDb {
  name: 'sqlite' | 'postgres';
  url: string;
  dir: string;
  drop(): Promise<void>;
}

const pgUrl = process.env.TEST_DATABASE_URL;

/** The dialects this run covers: SQLite always, PostgreSQL when TEST_DATABASE_URL is set (a loud notice when not; an error under TEST_NO_SKIP=1). */
export function dialects(): Array<'sqlite' | 'postgres'> {
  return needs('postgres') ? ['sqlite', 'postgres'] : ['sqlite'];
}

/**
 * `it` on PostgreSQL; on SQLite nothing, for a test that has no meaning there (one writer, no
 * server): it is not registered at all, so a run under TEST_NO_SKIP=1 shows no skipped test.
 */
export function onPostgres(dialect: 'sqlite' | 'postgres'): typeof it {
  return dialect === 'postgres' ? it : ((() => {}) as unknown as typeof it);
}

/** Creates an empty database of the dialect: a SQLite file in a temp folder, or a new PostgreSQL database. */
export async function createTestDb(name: 'sqlite' | 'postgres'): Promise<TestDb> {
  const dir = mkdtempSync(path.join(tmpdir(), 'gengate-test-'));
  if (name === 'sqlite') {
    return { name, url: `sqlite:${path.join(dir, 'test.db')}`, dir, drop: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  const dbName = `gg_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: pgUrl });
  await admin.connect();
  await admin.query(`create database ${dbName}`);
  await admin.end();
  const url = new URL(pgUrl!);
  url.pathname = `/${dbName}`;
  return {
    name,
    url: url.toString(),
    dir,
    drop: async () => {
      rmSync(dir, { recursive: true, force: true });
      const c = new pg.Client({ connectionString: pgUrl });
      await c.connect();
      await c.query(`drop database if exists ${dbName} with (force)`);
      await c.end();
    },
  };
}

/** What {@link freshDatabase} does before handing the database over. */
export interface FreshOptions {
  /**
   * Apply only the migrations numbered below this one, so a test can write rows as they were
   * before it and then run `migrate(database)` for the rest. Default: all migrations.
   */
  before?: number;
  /** false: apply no migration at all (a test that makes its own tables). Default true. */
  migrate?: boolean;
  /** Passed to openDatabase (guards, slow-transaction check, prepared statements). */
  open?: OpenOptions;
}

/** A fresh database of one dialect, opened; `close` closes the handle, then drops the database. */
export interface FreshDatabase extends TestDb {
  database: Database;
  close(): Promise<void>;
}

/**
 * Creates an empty database of the dialect (createTestDb), opens it and migrates it as `opts`
 * says. The caller must `close()` it, also when the test fails (afterAll or finally).
 */
export async function freshDatabase(dialect: 'sqlite' | 'postgres', opts: FreshOptions = {}): Promise<FreshDatabase> {
  const testDb = await createTestDb(dialect);
  const database = openDatabase(testDb.url, opts.open);
  const close = async () => {
    await database.close();
    await testDb.drop();
  };
  try {
    if (opts.migrate !== false) {
      const before = opts.before;
      await migrate(database, before === undefined ? {} : { migrations: MIGRATIONS.filter((m) => m.version < before) });
    }
  } catch (err) {
    await close();
    throw err;
  }
  return { ...testDb, database, close };
}
