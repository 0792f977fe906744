import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/store/db.js';
import { insertRow, precompile, prepared, updateThen, updateWhere } from '../../src/store/prepared.js';
import type { DB } from '../../src/store/schema.js';
import { dialects, freshDatabase, type FreshDatabase } from '../helpers/db.js';
import { accountRow } from '../tasks/support.js';

const renameStatement = prepared(2, (db: Kysely<DB>, id, name) => db.updateTable('accounts').set({ name }).where('id', '=', id).returning(['id', 'name']));

/** Statements compiled once and run on the caller's executor: the handle or a transaction. */
describe.each(dialects())('prepared statements on %s', (dialect) => {
  let t: FreshDatabase;
  let database: Database;
  beforeAll(async () => {
    t = await freshDatabase(dialect);
    database = t.database;
  });
  afterAll(() => t.close());

  const names = async () => (await database.db.selectFrom('accounts').select(['id', 'name']).orderBy('id').execute()).map((r) => `${r.id}=${r.name}`);

  it('inserts rows of one shape with each call’s own values, and leaves out undefined values as Kysely does', async () => {
    await database.tx(async (trx) => {
      await insertRow(trx, 'accounts', accountRow('a1', 'first'));
      await insertRow(trx, 'accounts', accountRow('a2', "second's"));
      await insertRow(trx, 'accounts', { ...accountRow('a3', 'third'), rate_read_limit: undefined });
    });
    expect(await names()).toEqual(['a1=first', "a2=second's", 'a3=third']);
  });

  it('runs on the transaction it is given: rolled back with it, committed with it', async () => {
    await expect(
      database.tx(async (trx) => {
        await insertRow(trx, 'accounts', accountRow('b1', 'rolled back'));
        expect((await renameStatement(trx, 'a1', 'renamed in tx')).rows).toEqual([{ id: 'a1', name: 'renamed in tx' }]);
        throw new Error('stop');
      }),
    ).rejects.toThrow('stop');
    expect(await names()).toEqual(['a1=first', "a2=second's", 'a3=third']);
    await database.tx(async (trx) => {
      await renameStatement(trx, 'a2', 'kept');
    });
    expect(await names()).toEqual(['a1=first', 'a2=kept', 'a3=third']);
    expect((await database.tx((w) => renameStatement(w, 'nobody', 'x'), { atomic: false })).rows).toEqual([]);
  });

  it('updates by shape and still takes an SQL expression in the patch', async () => {
    const update = (set: { name: string }, where: Record<string, string>) => database.tx((w) => updateWhere(w, 'accounts', set, where), { atomic: false });
    expect(await update({ name: 'by shape' }, { id: 'a3', status: 'active' })).toBe(1);
    expect(await update({ name: 'nobody' }, { id: 'a3', status: 'disabled' })).toBe(0);
    const expr = sql<string>`name || ${' (expr)'}` as unknown as string;
    expect(await update({ name: expr }, { id: 'a3' })).toBe(1);
    expect(await names()).toContain('a3=by shape (expr)');
  });

  it('updateThen: the writes that follow an update only when it matched (one statement on PostgreSQL), with a patch of values or of an SQL expression', async () => {
    await database.tx(async (trx) => {
      await insertRow(trx, 'accounts', accountRow('u1', 'one'));
      await insertRow(trx, 'accounts', accountRow('u2', 'two'));
    });
    const run = (status: 'active' | 'disabled', name: string, added: string[], follow: string) =>
      database.tx(
        (w) =>
          updateThen(w, 'accounts', { name }, { id: 'u1', status }, [
            { insert: 'accounts', rows: added.map((id) => accountRow(id)) },
            { update: 'accounts', set: { name: follow }, where: { id: 'u2', webhook_secret_previous: null } },
          ]),
        { atomic: false },
      );
    const ours = async () => (await names()).filter((n) => n.startsWith('u'));
    expect(await run('disabled', 'not matched', ['u3'], 'not followed')).toBe(0);
    expect(await ours()).toEqual(['u1=one', 'u2=two']);
    expect(await run('active', 'matched', ['u3', 'u4'], 'followed')).toBe(1);
    expect(await ours()).toEqual(['u1=matched', 'u2=followed', 'u3=u3', 'u4=u4']);
    const expr = sql<string>`name || ${' (expr)'}` as unknown as string;
    expect(await run('active', expr, ['u5'], 'followed again')).toBe(1);
    expect(await ours()).toEqual(['u1=matched (expr)', 'u2=followed again', 'u3=u3', 'u4=u4', 'u5=u5']);
    // A `where` value of null is `is null`: a row whose column holds a value is not followed.
    await database.tx((w) => updateWhere(w, 'accounts', { webhook_secret_previous: 'sealed' }, { id: 'u2' }), { atomic: false });
    expect(await run('active', 'again', [], 'not followed')).toBe(1);
    expect(await ours()).toContain('u2=followed again');
  });

  it('refuses a statement that does not use every argument', () => {
    const bad = prepared(2, (db: Kysely<DB>, id) =>
      db
        .selectFrom('accounts')
        .select('id')
        .where('id', '=', id)
        .where(sql<boolean>`1 = 1`),
    );
    return expect(database.tx((trx) => bad(trx, 'a1', 'unused'))).rejects.toThrow(/does not use all of its 2 arguments/);
  });

  it('reads through the fast path with each call’s values, and still reads after the schema changed under a prepared read', async () => {
    const byId = precompile(database.db, 1, (id) => database.db.selectFrom('accounts').selectAll().where('id', '=', id));
    expect((await byId('a1')).map((r) => r.id)).toEqual(['a1']);
    expect((await byId('a2')).map((r) => r.id)).toEqual(['a2']);
    // What a newer process's migration does while this one runs (PostgreSQL: "cached plan must not change result type").
    await database.tx((trx) => sql`alter table accounts add column later_column text`.execute(trx));
    const [row] = await byId('a1');
    expect(row).toMatchObject({ id: 'a1', later_column: null });
    expect((await byId('a2'))[0]).toMatchObject({ id: 'a2', later_column: null });
  });

  it('reads the same with named statements turned off (DATABASE_PREPARED=false)', async () => {
    const plain = openDatabase(t.url, { prepared: false });
    try {
      const byId = precompile(plain.db, 1, (id) => plain.db.selectFrom('accounts').select(['id', 'name']).where('id', '=', id));
      expect(await byId('a2')).toEqual(await database.db.selectFrom('accounts').select(['id', 'name']).where('id', '=', 'a2').execute());
    } finally {
      await plain.close();
    }
  });
});
