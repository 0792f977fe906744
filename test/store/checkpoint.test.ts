import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { freshDatabase, type FreshDatabase } from '../helpers/db.js';
import type { Database } from '../../src/store/db.js';
import { openConnection } from '../../src/store/index.js';
import { eventually } from '../tasks/support.js';

describe('SQLite WAL checkpoints', () => {
  let tdb: FreshDatabase;
  let database: Database;
  beforeAll(async () => {
    tdb = await freshDatabase('sqlite', { migrate: false });
    database = tdb.database;
    await database.tx((trx) => sql`create table t (id integer primary key, v text)`.execute(trx));
  });
  afterAll(() => tdb.close());

  it('are done by the background worker, so the WAL restarts small while the app keeps writing', async () => {
    for (let i = 0; i < 300; i++) await database.tx((t) => sql`insert into t (v) values (${'x'.repeat(2000)})`.execute(t));
    // The WAL header's checkpoint sequence (bytes 12-15, sqlite.org/fileformat2.html#walformat) moves when
    // a write restarts the WAL, which it may only do once the WAL has been checkpointed in full: write
    // until it moves. Nothing here checkpoints but the worker (the main connection's autocheckpoint is far off).
    const wal = tdb.url.slice('sqlite:'.length) + '-wal';
    const sequence = () => readFileSync(wal).readUInt32BE(12);
    const before = sequence();
    await eventually(
      async () => {
        await database.tx((t) => sql`insert into t (v) values ('after')`.execute(t));
        return sequence() !== before;
      },
      15_000,
      'the WAL to restart after a checkpoint',
    );
    const probe = openConnection(tdb.url.slice('sqlite:'.length));
    // [busy, frames in the WAL, frames checkpointed]: without the worker ~600 frames would be waiting.
    const row = probe.prepare('PRAGMA wal_checkpoint(PASSIVE)').all() as Array<{ log: number }>;
    probe.close();
    expect(row[0]!.log).toBeLessThan(50);
  });
});
