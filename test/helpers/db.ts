import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** A fresh, empty database for one test file. */
export interface TestDb {
  name: 'sqlite' | 'postgres';
  url: string;
  dir: string;
  drop(): Promise<void>;
}

const pgUrl = process.env.TEST_DATABASE_URL;
let noticeShown = false;

/** The dialects this run covers: SQLite always, PostgreSQL when TEST_DATABASE_URL is set (with a visible notice when not). */
export function dialects(): Array<'sqlite' | 'postgres'> {
  if (!pgUrl && !noticeShown) {
    noticeShown = true;
    process.stderr.write('\n*** NOTICE: TEST_DATABASE_URL is not set: the PostgreSQL half of the integration suite is SKIPPED ***\n\n');
  }
  return pgUrl ? ['sqlite', 'postgres'] : ['sqlite'];
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
