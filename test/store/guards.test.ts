import { once } from 'node:events';
import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  openDatabase,
  migrate,
  precompile,
  readByKey,
  insertRow,
  prepared,
  updateWhere,
  StoreMisuse,
  DatabaseTooNew,
  MIGRATIONS,
  type Database,
  type DB,
} from '../../src/store/index.js';
import { ConfigError, loadConfig } from '../../src/config.js';
import { buildServices } from '../../src/services.js';
import { createTestDb, dialects, freshDatabase, type FreshDatabase, type TestDb } from '../helpers/db.js';
import { accountRow } from '../tasks/support.js';

/**
 * The store's guard rails (src/store/README.md): mistakes that deadlock, stall every writer or read
 * a stale row on SQLite, and pass unnoticed on PostgreSQL, fail loudly on both.
 */
describe.each(dialects())('store guard rails on %s', (dialect) => {
  let t: FreshDatabase;
  let database: Database;
  let nameOf: (id: string) => Promise<string | undefined>;
  let nameByKey: (id: string) => Promise<Array<{ name: string }>>;
  beforeAll(async () => {
    t = await freshDatabase(dialect);
    database = t.database;
    await database.tx((trx) => insertRow(trx, 'accounts', accountRow('g1', 'committed')));
    const read = precompile(database.db, 1, (id) => database.db.selectFrom('accounts').select('name').where('id', '=', id));
    nameOf = async (id) => ((await read(id))[0] as { name: string } | undefined)?.name;
    nameByKey = readByKey(
      database,
      'id',
      () => database.db.selectFrom('accounts').select(['id', 'name']),
      (r) => r.id,
    );
  });
  afterAll(() => t.close());

  it('refuses a transaction inside a transaction, and the outer one still commits', async () => {
    let inner: unknown;
    await database.tx(async (trx) => {
      await trx.updateTable('accounts').set({ name: 'outer' }).where('id', '=', 'g1').execute();
      inner = await database.tx((t2) => t2.selectFrom('accounts').selectAll().execute()).catch((e: unknown) => e);
      // Also the non-atomic form: on SQLite it joins the same group commit.
      await expect(database.tx(async () => 1, { atomic: false })).rejects.toThrow(StoreMisuse);
    });
    expect(inner).toBeInstanceOf(StoreMisuse);
    expect((inner as Error).message).toMatch(/database\.tx called inside a transaction of the same database: pass the transaction handle \(trx\) down/);
    expect(await nameOf('g1')).toBe('outer');
  });

  it('lets code a transaction started but did not await open its own transaction once the first has ended', async () => {
    let later!: Promise<number>;
    let go!: () => void;
    const gate = new Promise<void>((resolve) => (go = resolve));
    await database.tx(async () => {
      later = gate.then(() => database.tx(async () => 2));
    });
    go();
    expect(await later).toBe(2);
  });

  it('refuses a precompiled read inside a transaction (it cannot see the transaction’s writes), and the transaction rolls back', async () => {
    for (const read of [() => nameOf('g1'), () => nameByKey('g1')]) {
      const outcome = await database
        .tx(async (trx) => {
          await trx.updateTable('accounts').set({ name: 'inside' }).where('id', '=', 'g1').execute();
          return read();
        })
        .catch((e: unknown) => e);
      expect(outcome).toBeInstanceOf(StoreMisuse);
      expect((outcome as Error).message).toMatch(/a precompiled read inside database\.tx: .* read on the transaction handle \(trx\) instead/);
    }
    expect(await nameOf('g1')).not.toBe('inside');
    // Outside a transaction both read what is committed.
    await database.tx((trx) => trx.updateTable('accounts').set({ name: 'after' }).where('id', '=', 'g1').execute());
    expect(await nameOf('g1')).toBe('after');
    expect(await nameByKey('g1')).toEqual([{ id: 'g1', name: 'after' }]);
  });

  it('refuses a query on the read handle inside a transaction (on SQLite it would wait for the transaction forever)', async () => {
    const outcome = await database.tx(async () => database.db.selectFrom('accounts').selectAll().execute()).catch((e: unknown) => e);
    expect(outcome).toBeInstanceOf(StoreMisuse);
    expect((outcome as Error).message).toMatch(/a query on database\.db inside database\.tx: run it on the transaction handle/);
  });

  it('refuses writes on the read handle, whichever way they are built, and writes nothing', async () => {
    const before = await database.db.selectFrom('accounts').select(['id', 'name']).orderBy('id').execute();
    expect(before).toHaveLength(1);
    const attempts: Array<() => Promise<unknown>> = [
      () => database.db.updateTable('accounts').set({ name: 'direct' }).where('id', '=', 'g1').execute(),
      () => database.db.insertInto('accounts').values(accountRow('g2', 'direct')).execute(),
      () => database.db.deleteFrom('accounts').where('id', '=', 'g1').execute(),
      () => insertRow(database.db, 'accounts', accountRow('g3', 'direct')),
      () => updateWhere(database.db, 'accounts', { name: 'direct' }, { id: 'g1' }),
      () => prepared(1, (db: Kysely<DB>, id) => db.deleteFrom('accounts').where('id', '=', id))(database.db, 'g1'),
      () => database.db.schema.createTable('direct').addColumn('id', 'text').execute(),
    ];
    for (const attempt of attempts) await expect(attempt()).rejects.toThrow(/database\.db is for reads|a write on database\.db/);
    // Raw SQL passes the query-kind check; SQLite's connection still refuses it outside a transaction.
    if (dialect === 'sqlite')
      await expect(sql`update accounts set name = 'raw' where id = 'g1'`.execute(database.db)).rejects.toThrow(/a write outside database\.tx/);
    expect(await database.db.selectFrom('accounts').select(['id', 'name']).orderBy('id').execute()).toEqual(before);
  });

  it('reports a transaction that holds its connection too long, with what it cost, and not a quick one', async () => {
    let now = 0;
    const reports: Array<{ ms: number; n: number }> = [];
    const watched = openDatabase(t.url, { slowTxMs: 50, now: () => now, onSlowTx: (ms, n) => reports.push({ ms, n }) });
    try {
      await watched.tx(async (trx) => trx.selectFrom('accounts').selectAll().execute());
      expect(reports).toEqual([]);
      await watched.tx(async (trx) => {
        await trx.selectFrom('accounts').selectAll().execute();
        now += 80; // what an await on something slow (a network call, a file) inside the transaction does
      });
      expect(reports).toEqual([{ ms: 80, n: 1 }]);
      // Migrations say they run long (alone, at start): not reported.
      await migrate(watched);
      expect(reports).toHaveLength(1);
    } finally {
      await watched.close();
    }
  });

  it('reports a slow transaction as a process warning by default', async () => {
    let now = 0;
    const watched = openDatabase(t.url, { slowTxMs: 50, now: () => now });
    try {
      const warned = once(process, 'warning');
      await watched.tx(async () => {
        now += 51;
      });
      const [warning] = (await warned) as [Error];
      expect(warning.name).toBe('SlowTransactionWarning');
      expect(warning.message).toMatch(/held its connection for 51 ms .* every other writer of this process waited/);
    } finally {
      await watched.close();
    }
  });
});

describe.each(dialects())('the guards switched off (DATABASE_GUARDS=false) on %s', (dialect) => {
  it('track nothing: a query on the read handle inside a transaction is not refused, writes on it still are', async () => {
    const t = await freshDatabase(dialect, { open: { guards: false } });
    const { database } = t;
    try {
      await database.tx((trx) => insertRow(trx, 'accounts', accountRow('g2', 'committed')));
      // On PostgreSQL the pool answers it; SQLite's side reader too (the main connection would wait for the transaction).
      const read = precompile(database.db, 1, (id) => database.db.selectFrom('accounts').select('name').where('id', '=', id));
      const seen = await database.tx(async (trx) => {
        await trx.updateTable('accounts').set({ name: 'inside' }).where('id', '=', 'g2').execute();
        return ((await read('g2'))[0] as { name: string }).name;
      });
      expect(seen).toBe('committed'); // the stale read the guards exist to refuse
      await expect(database.db.insertInto('accounts').values(accountRow('g3', 'x')).execute()).rejects.toThrow(StoreMisuse);
    } finally {
      await t.close();
    }
  });
});

describe('the guard rails and the slow-transaction check are a development and test aid', () => {
  it('the guards are on unless NODE_ENV=production, and DATABASE_GUARDS sets them', () => {
    expect(loadConfig({}).DATABASE_GUARDS).toBe(true);
    expect(loadConfig({ NODE_ENV: 'test' }).DATABASE_GUARDS).toBe(true);
    expect(loadConfig({ NODE_ENV: 'production' }).DATABASE_GUARDS).toBe(false);
    expect(loadConfig({ NODE_ENV: 'production', DATABASE_GUARDS: 'true' }).DATABASE_GUARDS).toBe(true);
    expect(() => loadConfig({ DATABASE_GUARDS: 'maybe' })).toThrow(ConfigError);
  });

  it('is on (50 ms) unless NODE_ENV=production, and DATABASE_SLOW_TX_MS sets it', () => {
    expect(loadConfig({}).DATABASE_SLOW_TX_MS).toBe(50);
    expect(loadConfig({ NODE_ENV: 'test' }).DATABASE_SLOW_TX_MS).toBe(50);
    expect(loadConfig({ NODE_ENV: 'production' }).DATABASE_SLOW_TX_MS).toBe(0);
    expect(loadConfig({ NODE_ENV: 'production', DATABASE_SLOW_TX_MS: '20' }).DATABASE_SLOW_TX_MS).toBe(20);
  });
});

/** A database a newer GenGate migrated: an API process may serve it, a process that runs tasks must not. */
describe.each(dialects())('a database newer than the code on %s', (dialect) => {
  let t: TestDb;
  beforeAll(async () => {
    t = await createTestDb(dialect);
    const database = openDatabase(t.url);
    await migrate(database);
    await database.tx((trx) => trx.insertInto('gengate_migrations').values({ version: 999, name: 'from the future', applied_at: 1 }).execute());
    await database.close();
  });
  afterAll(() => t.drop());

  const config = (role: string) => loadConfig({ DATA_DIR: t.dir, DATABASE_URL: t.url, ROLE: role, FIRST_RUN_ACCOUNT: 'false', MODERATION_IMAGES: 'off' });

  it('is refused for the worker role (and all, which runs the engine) with a message saying what to do', async () => {
    for (const role of ['worker', 'all']) {
      const outcome = await buildServices(config(role)).catch((e: unknown) => e);
      expect(outcome).toBeInstanceOf(ConfigError);
      expect((outcome as Error).message).toBe(
        'the database was migrated by a newer GenGate: migration 999 (from the future) is unknown to this version, which knows up to ' +
          `${MIGRATIONS.at(-1)!.version}. A process that runs tasks (ROLE=worker or all) refuses it; upgrade this process, or run it as ROLE=api until it is upgraded.`,
      );
    }
  });

  it('is served by the api role, and migrate alone leaves it as it is', async () => {
    const services = await buildServices(config('api'));
    await services.close();
    const database = openDatabase(t.url);
    try {
      expect(await migrate(database)).toEqual([]);
      await expect(migrate(database, { refuseNewer: true })).rejects.toThrow(DatabaseTooNew);
    } finally {
      await database.close();
    }
  });
});
