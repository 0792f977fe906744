import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/store/db.js';
import { insertRow } from '../../src/store/prepared.js';
import type { DB } from '../../src/store/schema.js';
import { freshDatabase, type FreshDatabase } from '../helpers/db.js';

/**
 * SQLite transactions asked for in one event-loop turn share a commit (src/store/group-commit.ts).
 * Sharing must not change what a caller sees: each runs alone and in order, one that throws loses
 * only its own writes, and nobody hears "done" unless the shared commit happened.
 */
describe('SQLite group commit', () => {
  let t: FreshDatabase;
  let database: Database;
  beforeAll(async () => {
    t = await freshDatabase('sqlite');
    database = t.database;
  });
  afterAll(() => t.close());

  const account = (id: string) => ({ id, name: id, status: 'active' as const, balance_micros: 0, webhook_secret: `whsec_${id}`, created_at: 1 });
  const ids = async (trx: Kysely<DB>, prefix: string) =>
    (await trx.selectFrom('accounts').select('id').where('id', 'like', `${prefix}%`).orderBy('id').execute()).map((r) => r.id);
  /** Changes committed so far on the main connection's file, seen from a second connection. */
  const committed = async (prefix: string) => {
    const other = openDatabase(t.url);
    try {
      return await ids(other.db, prefix);
    } finally {
      await other.close();
    }
  };

  it('runs the transactions of one turn in order, each seeing the ones before it, and commits them', async () => {
    const seen: number[] = [];
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        database.tx(async (trx) => {
          seen.push((await ids(trx, 'o')).length);
          await insertRow(trx, 'accounts', account(`o${i}`));
          return i;
        }),
      ),
    );
    expect(results).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(seen).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(await committed('o')).toHaveLength(10);
  });

  it('rolls back only the writes of a transaction that throws; the others of its batch are kept', async () => {
    const outcomes = await Promise.allSettled([
      database.tx((trx) => insertRow(trx, 'accounts', account('f1'))),
      database.tx(async (trx) => {
        await insertRow(trx, 'accounts', account('f2'));
        throw new Error('changed my mind');
      }),
      // A constraint error mid-batch: the duplicate id.
      database.tx((trx) => insertRow(trx, 'accounts', account('f1'))),
      database.tx((trx) => insertRow(trx, 'accounts', account('f3'))),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'rejected', 'fulfilled']);
    expect((outcomes[1] as PromiseRejectedResult).reason.message).toBe('changed my mind');
    expect(await committed('f')).toEqual(['f1', 'f3']);
  });

  it('rolls back a transaction alone in its turn that throws, and keeps the next one', async () => {
    await expect(
      database.tx(async (trx) => {
        await insertRow(trx, 'accounts', account('s1'));
        throw new Error('alone and wrong');
      }),
    ).rejects.toThrow('alone and wrong');
    await new Promise((r) => setImmediate(r));
    await database.tx((trx) => insertRow(trx, 'accounts', account('s2')));
    expect(await committed('s')).toEqual(['s2']);
  });

  it('commits non-atomic writes (tx with atomic: false) with the transactions of their turn; a failing one loses only itself', async () => {
    const write = <T>(fn: (w: Kysely<DB>) => Promise<T>) => database.tx(fn, { atomic: false });
    const outcomes = await Promise.allSettled([
      write((w) => insertRow(w, 'accounts', account('u1'))),
      database.tx((trx) => insertRow(trx, 'accounts', account('u2'))),
      write((w) => insertRow(w, 'accounts', account('u1'))),
      write((w) => w.updateTable('accounts').set({ name: 'written' }).where('id', '=', 'u2').execute()),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    // Settled means committed: another connection sees it.
    expect(await committed('u')).toEqual(['u1', 'u2']);
    const other = openDatabase(t.url);
    try {
      expect((await other.db.selectFrom('accounts').select('name').where('id', '=', 'u2').executeTakeFirst())?.name).toBe('written');
    } finally {
      await other.close();
    }
  });

  it('tells every caller of a batch that failed as a whole, and keeps nothing of it', async () => {
    const outcomes = await Promise.allSettled([
      database.tx((trx) => insertRow(trx, 'accounts', account('w1'))),
      database.tx(async (trx) => {
        await insertRow(trx, 'accounts', account('w2'));
        // What SQLite does on a full disk or an I/O error: the whole transaction is gone.
        await sql`rollback`.execute(trx);
        throw new Error('disk I/O error');
      }),
      database.tx((trx) => insertRow(trx, 'accounts', account('w3'))),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected', 'rejected']);
    expect(await committed('w')).toEqual([]);
    // The connection is usable again.
    await database.tx((trx) => insertRow(trx, 'accounts', account('w4')));
    expect(await committed('w')).toEqual(['w4']);
  });

  it('settles no caller before its data is committed', async () => {
    const seenByOthers: string[][] = [];
    await Promise.all(
      ['c1', 'c2', 'c3'].map((id) => database.tx((trx) => insertRow(trx, 'accounts', account(id))).then(async () => seenByOthers.push(await committed('c')))),
    );
    for (const seen of seenByOthers) expect(seen).toEqual(['c1', 'c2', 'c3']);
  });
});
