import { setTimeout as sleep } from 'node:timers/promises';
import SqliteDatabase from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { createTestDb, type TestDb } from '../helpers/db.js';
import { openDatabase, type Database } from '../../src/store/db.js';

describe('SQLite WAL checkpoints', () => {
  let tdb: TestDb;
  let database: Database;
  beforeAll(async () => {
    tdb = await createTestDb('sqlite');
    database = openDatabase(tdb.url);
    await sql`create table t (id integer primary key, v text)`.execute(database.db);
  });
  afterAll(async () => {
    await database.close();
    await tdb.drop();
  });

  it('are done by the background worker, so the WAL restarts small while the app keeps writing', async () => {
    for (let i = 0; i < 300; i++) await database.tx((t) => sql`insert into t (v) values (${'x'.repeat(2000)})`.execute(t));
    await sleep(1500);
    await database.tx((t) => sql`insert into t (v) values ('after')`.execute(t));
    const probe = new SqliteDatabase(tdb.url.slice('sqlite:'.length));
    // [busy, frames in the WAL, frames checkpointed]: without the worker ~600 frames would be waiting.
    const row = probe.pragma('wal_checkpoint(PASSIVE)') as Array<{ log: number }>;
    probe.close();
    expect(row[0]!.log).toBeLessThan(50);
  });
});
