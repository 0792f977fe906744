import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import SqliteDatabase from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/store/db.js';
import { migrate } from '../../src/store/migrate.js';
import { insertRow, precompile } from '../../src/store/prepared.js';

/** A migrated SQLite database in a new folder, and another process's connection (the CLI) writing the same file. */
async function openWithOther(prefix: string) {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  const file = path.join(dir, 'gengate.db');
  const database = openDatabase(`sqlite:${file}`);
  await migrate(database);
  const other = new SqliteDatabase(file);
  other.pragma('busy_timeout = 10000');
  const close = async () => {
    other.close();
    await database.close();
    rmSync(dir, { recursive: true, force: true });
  };
  return { database, other, close };
}

/**
 * The precompiled reads of one event-loop turn share one read transaction on SQLite's side
 * connection (sqlite-reader.ts). What a caller must still see: every write of this process made
 * before the read, in the same turn too, and another process's commit from the next turn on.
 */
describe('SQLite hot reads share a snapshot per turn', () => {
  let database: Database;
  let other: SqliteDatabase.Database;
  let close: () => Promise<void>;
  let nameOf: (id: string) => Promise<string | undefined>;

  beforeAll(async () => {
    ({ database, other, close } = await openWithOther('gengate-reader-'));
    const read = precompile(database.db, 1, (id) => database.db.selectFrom('accounts').select('name').where('id', '=', id));
    nameOf = async (id) => ((await read(id))[0] as { name: string } | undefined)?.name;
  });
  afterAll(() => close());

  const account = (id: string, name: string) => ({ id, name, status: 'active' as const, balance_micros: 0, webhook_secret: `whsec_${id}`, created_at: 1 });

  it('sees a write this process made earlier in the same turn, plain or in a transaction', async () => {
    await insertRow(database.db, 'accounts', account('r1', 'first'));
    expect(await nameOf('r1')).toBe('first');
    // Still the same turn: the read above opened the shared snapshot.
    await database.db.updateTable('accounts').set({ name: 'second' }).where('id', '=', 'r1').execute();
    expect(await nameOf('r1')).toBe('second');
    await database.tx(async (trx) => {
      await trx.updateTable('accounts').set({ name: 'third' }).where('id', '=', 'r1').execute();
    });
    expect(await nameOf('r1')).toBe('third');
    // A write that returns rows is still a write.
    await database.db.updateTable('accounts').set({ name: 'returned' }).where('id', '=', 'r1').returning('name').execute();
    expect(await nameOf('r1')).toBe('returned');
    await database.db.updateTable('accounts').set({ name: 'third' }).where('id', '=', 'r1').execute();
  });

  it('never sees a transaction of this process that has not committed yet', async () => {
    let inside: string | undefined;
    await database.tx(async (trx) => {
      await trx.updateTable('accounts').set({ name: 'uncommitted' }).where('id', '=', 'r1').execute();
      inside = await nameOf('r1');
    });
    expect(inside).toBe('third');
    expect(await nameOf('r1')).toBe('uncommitted');
  });

  it('sees another process’s commit from the next turn on, and within a turn reads one snapshot', async () => {
    expect(await nameOf('r1')).toBe('uncommitted');
    other.prepare(`update accounts set name = 'from the CLI' where id = 'r1'`).run();
    // The same turn keeps the snapshot its first read took: both reads agree with each other.
    expect(await nameOf('r1')).toBe('uncommitted');
    await nextTurn();
    expect(await nameOf('r1')).toBe('from the CLI');
  });

  it('builds rows with every column under its own name, whatever the name', async () => {
    const read = precompile(database.db, 1, (id) =>
      database.db.selectFrom('accounts').select(['id', 'balance_micros as a "quoted" \\name', 'created_at', 'rate_read_limit']).where('id', '=', id),
    );
    expect(await read('r1')).toEqual([{ id: 'r1', 'a "quoted" \\name': 0, created_at: 1, rate_read_limit: null }]);
    expect(await read('nobody')).toEqual([]);
  });

  it('holds no read transaction between turns, so checkpoints can restart the WAL', async () => {
    await nameOf('r1');
    await nextTurn();
    await nextTurn();
    const result = other.pragma('wal_checkpoint(TRUNCATE)') as Array<{ busy: number; log: number; checkpointed: number }>;
    expect(result[0]!.busy).toBe(0);
    expect(result[0]!.log).toBe(0);
  });
});

/**
 * Reads asked for with `cached` (balance polls) are answered from kept results while SQLite's
 * data_version says nothing has been committed. What a caller must see all the same: every commit of
 * this process at once, another process's commit from the next turn on, nothing uncommitted.
 */
describe('SQLite cached hot reads', () => {
  let database: Database;
  let other: SqliteDatabase.Database;
  let close: () => Promise<void>;
  let read: (id: string) => Promise<unknown[]>;
  const balanceOf = async (id: string) => ((await read(id))[0] as { balance_micros: number } | undefined)?.balance_micros;

  beforeAll(async () => {
    ({ database, other, close } = await openWithOther('gengate-reader-cache-'));
    read = precompile(database.db, 1, (id) => database.db.selectFrom('accounts').select(['id', 'balance_micros']).where('id', '=', id), { cached: true });
    for (const id of ['c1', 'c2']) {
      await insertRow(database.db, 'accounts', { id, name: id, status: 'active', balance_micros: 100, webhook_secret: `whsec_${id}`, created_at: 1 });
    }
  });
  afterAll(() => close());

  it('serves a kept, frozen result while nothing has been committed', async () => {
    const first = await read('c1');
    await nextTurn();
    const again = await read('c1');
    expect(again).toBe(first);
    expect(Object.isFrozen(again)).toBe(true);
    expect(Object.isFrozen(again[0])).toBe(true);
    expect(await read('nobody')).toEqual([]);
  });

  it('sees every commit of this process at once: plain, in a transaction, through write()', async () => {
    expect(await balanceOf('c1')).toBe(100);
    await database.db.updateTable('accounts').set({ balance_micros: 200 }).where('id', '=', 'c1').execute();
    expect(await balanceOf('c1')).toBe(200);
    await database.tx(async (trx) => {
      await trx.updateTable('accounts').set({ balance_micros: 300 }).where('id', '=', 'c1').execute();
    });
    expect(await balanceOf('c1')).toBe(300);
    await database.write(async (w) => {
      await w.updateTable('accounts').set({ balance_micros: 400 }).where('id', '=', 'c1').execute();
    });
    expect(await balanceOf('c1')).toBe(400);
  });

  it('never serves a transaction of this process that has not committed yet', async () => {
    let inside: number | undefined;
    await database.tx(async (trx) => {
      await trx.updateTable('accounts').set({ balance_micros: 500 }).where('id', '=', 'c1').execute();
      inside = await balanceOf('c1');
    });
    expect(inside).toBe(400);
    expect(await balanceOf('c1')).toBe(500);
  });

  it('sees another process’s commit from the next turn on, also for a result read after that commit', async () => {
    await nextTurn();
    // A kept result: this turn checks the version but opens no snapshot.
    expect(await balanceOf('c1')).toBe(500);
    other.prepare(`update accounts set balance_micros = balance_micros + 1 where id in ('c1', 'c2')`).run();
    // c2, missing, is read after the commit: it is newer than the version this turn checked ...
    expect(await balanceOf('c2')).toBe(101);
    await nextTurn();
    // ... and the next turn sees the new version: c1 is read again, not served from before.
    expect(await balanceOf('c1')).toBe(501);
    expect(await balanceOf('c2')).toBe(101);
    other.prepare(`update accounts set balance_micros = 7 where id = 'c2'`).run();
    await nextTurn();
    expect(await balanceOf('c2')).toBe(7);
  });
});
