import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/store/db.js';
import { readByKey } from '../../src/store/batched.js';
import { insertRow } from '../../src/store/prepared.js';
import { dialects, freshDatabase, type FreshDatabase, onPostgres } from '../helpers/db.js';
import { accountRow, eventually } from '../tasks/support.js';

/** Point reads by key (readByKey): each caller gets its own rows; on PostgreSQL the reads of one turn share one query. */
describe.each(dialects())('reads by key on %s', (dialect) => {
  let t: FreshDatabase;
  let database: Database;
  let nameOf: (id: string) => Promise<Array<{ id: string; name: string }>>;
  beforeAll(async () => {
    t = await freshDatabase(dialect);
    database = t.database;
    await database.tx(async (trx) => {
      for (let i = 0; i < 40; i++) await insertRow(trx, 'accounts', accountRow(`k${i}`, `name ${i}`));
    });
    nameOf = readByKey(
      database,
      'id',
      () => database.db.selectFrom('accounts').select(['id', 'name']),
      (r) => r.id,
    );
  });
  afterAll(() => t.close());

  it('gives every caller of a turn its own row, the same key twice, and nothing for an unknown key', async () => {
    const keys = [...Array.from({ length: 40 }, (_, i) => `k${i}`), 'k3', 'nobody', 'k39'];
    const rows = await Promise.all(keys.map((k) => nameOf(k)));
    rows.forEach((r, i) => {
      const key = keys[i]!;
      expect(r).toEqual(key === 'nobody' ? [] : [{ id: key, name: `name ${key.slice(1)}` }]);
    });
  });

  it('sees a change committed before the read', async () => {
    await database.tx((w) => w.updateTable('accounts').set({ name: 'renamed' }).where('id', '=', 'k5').execute(), { atomic: false });
    expect(await nameOf('k5')).toEqual([{ id: 'k5', name: 'renamed' }]);
  });

  onPostgres(dialect)('sends the reads of one turn as one query, and a failure reaches every caller of it', async () => {
    // Another session holds the table, so the batch waits where pg_stat_activity shows it.
    const blocker = new pg.Client({ connectionString: t.url });
    await blocker.connect();
    try {
      await blocker.query('begin');
      await blocker.query('lock table accounts in access exclusive mode');
      // pg_stat_activity is read once per transaction (the blocker's is open) unless the snapshot is cleared.
      const fresh = async (query: string) => {
        await blocker.query('select pg_stat_clear_snapshot()');
        return blocker.query(query);
      };
      const waiting = async () =>
        (await fresh(`select query from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`)).rows.map(
          (r: { query: string }) => r.query,
        );
      const reads = Array.from({ length: 30 }, (_, i) => nameOf(`k${i}`));
      await eventually(async () => (await waiting()).length > 0, 15_000, 'the batch to wait on the lock');
      // A read of a later turn is a second batch: once it waits too, every query of the first turn was sent long before.
      const marker = nameOf('k31');
      const queries = await eventually(
        async () => {
          const now = await waiting();
          return now.length >= 2 ? now : null;
        },
        15_000,
        'the marker batch to wait on the lock',
      );
      expect(queries).toEqual([expect.stringMatching(/= any\(\$1\)/), expect.stringMatching(/= any\(\$1\)/)]);
      await blocker.query('rollback');
      const rows = await Promise.all(reads);
      rows.forEach((r, i) => expect(r).toEqual([{ id: `k${i}`, name: i === 5 ? 'renamed' : `name ${i}` }]));
      expect(await marker).toEqual([{ id: 'k31', name: 'name 31' }]);

      // A batch that fails (here: the query is cancelled) rejects each of its callers.
      await blocker.query('begin');
      await blocker.query('lock table accounts in access exclusive mode');
      const failing = [nameOf('k1'), nameOf('k2')].map((p) =>
        p.then(
          () => 'ok',
          (e: Error) => e.message,
        ),
      );
      await eventually(
        async () =>
          (await fresh(`select pg_cancel_backend(pid) from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`)).rowCount,
        15_000,
        'the batch to wait on the lock (and be cancelled)',
      );
      expect(await Promise.all(failing)).toEqual([expect.stringMatching(/cancel/), expect.stringMatching(/cancel/)]);
    } finally {
      await blocker.query('rollback').catch(() => {});
      await blocker.end();
    }
  });
});
