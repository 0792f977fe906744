import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/store/db.js';
import { insertRow, precompile } from '../../src/store/prepared.js';
import type { DB } from '../../src/store/schema.js';
import { StoreMisuse } from '../../src/store/guards.js';
import { openConnection, type Connection } from '../../src/store/index.js';
import { freshDatabase } from '../helpers/db.js';

/** A migrated SQLite database in a new folder, and another process's connection (the CLI) writing the same file. */
async function openWithOther() {
  const fresh = await freshDatabase('sqlite');
  const other = openConnection(fresh.url.slice('sqlite:'.length));
  other.exec('PRAGMA busy_timeout = 10000');
  const close = async () => {
    other.close();
    await fresh.close();
  };
  return { database: fresh.database, other, close };
}

/**
 * The precompiled reads of one event-loop turn share one read transaction on SQLite's side
 * connection (sqlite-reader.ts). What a caller must still see: every write of this process made
 * before the read, in the same turn too, and another process's commit from the next turn on.
 */
describe('SQLite hot reads share a snapshot per turn', () => {
  let database: Database;
  let other: Connection;
  let close: () => Promise<void>;
  let nameOf: (id: string) => Promise<string | undefined>;

  beforeAll(async () => {
    ({ database, other, close } = await openWithOther());
    const read = precompile(database.db, 1, (id) => database.db.selectFrom('accounts').select('name').where('id', '=', id));
    nameOf = async (id) => ((await read(id))[0] as { name: string } | undefined)?.name;
  });
  afterAll(() => close());

  const account = (id: string, name: string) => ({ id, name, status: 'active' as const, balance_micros: 0, webhook_secret: `whsec_${id}`, created_at: 1 });

  it('sees a write this process made earlier in the same turn, atomic or not', async () => {
    const write = (fn: (w: Kysely<DB>) => Promise<unknown>) => database.tx(fn, { atomic: false });
    await write((w) => insertRow(w, 'accounts', account('r1', 'first')));
    expect(await nameOf('r1')).toBe('first');
    // Still the same turn: the read above opened the shared snapshot.
    await write((w) => w.updateTable('accounts').set({ name: 'second' }).where('id', '=', 'r1').execute());
    expect(await nameOf('r1')).toBe('second');
    await database.tx(async (trx) => {
      await trx.updateTable('accounts').set({ name: 'third' }).where('id', '=', 'r1').execute();
    });
    expect(await nameOf('r1')).toBe('third');
    // A write that returns rows is still a write.
    await write((w) => w.updateTable('accounts').set({ name: 'returned' }).where('id', '=', 'r1').returning('name').execute());
    expect(await nameOf('r1')).toBe('returned');
    await write((w) => w.updateTable('accounts').set({ name: 'third' }).where('id', '=', 'r1').execute());
  });

  it('answers a read outside an open transaction from what is committed, and refuses one inside it (guards on)', async () => {
    let inside: unknown;
    let wrote!: () => void;
    const written = new Promise<void>((resolve) => (wrote = resolve));
    // Asked for outside the transaction (its own async context), while the transaction is open.
    const outside = written.then(() => nameOf('r1'));
    await database.tx(async (trx) => {
      await trx.updateTable('accounts').set({ name: 'uncommitted' }).where('id', '=', 'r1').execute();
      wrote();
      inside = await nameOf('r1').catch((e: unknown) => e);
      expect(await outside).toBe('third');
    });
    // The side connection cannot see the transaction's writes: the guard refuses the read (decision 0017).
    expect(inside).toBeInstanceOf(StoreMisuse);
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

  it('builds the rows of a `select *` with the columns it has after another process changed the table', async () => {
    const everything = precompile(database.db, 1, (id) => database.db.selectFrom('accounts').selectAll().where('id', '=', id));
    expect(await everything('r1')).toEqual([expect.not.objectContaining({ from_cli: expect.anything() })]);
    other.exec('alter table accounts add column from_cli text');
    other.prepare(`update accounts set from_cli = 'added' where id = 'r1'`).run();
    await nextTurn();
    expect((await everything('r1'))[0]).toMatchObject({ id: 'r1', from_cli: 'added' });
    // A rename keeps the row's width: the new name must still show.
    other.exec('alter table accounts rename column from_cli to renamed_by_cli');
    await nextTurn();
    const [row] = (await everything('r1')) as Array<Record<string, unknown>>;
    expect(row).toMatchObject({ id: 'r1', renamed_by_cli: 'added' });
    expect(row).not.toHaveProperty('from_cli');
  });

  it('holds no read transaction between turns, so checkpoints can restart the WAL', async () => {
    await nameOf('r1');
    await nextTurn();
    await nextTurn();
    const result = other.prepare('PRAGMA wal_checkpoint(TRUNCATE)').all() as Array<{ busy: number; log: number; checkpointed: number }>;
    expect(result[0]!.busy).toBe(0);
    expect(result[0]!.log).toBe(0);
  });
});
