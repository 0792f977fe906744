import pg from 'pg';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { dialects, freshDatabase } from '../helpers/db.js';
import { eventually } from '../tasks/support.js';

/** PostgreSQL ending an idle pooled connection (restart, failover, an administrator) must not crash the process. */
// SQLite has no server that could end a connection: PostgreSQL only.
describe.skipIf(!dialects().includes('postgres'))('the postgres connection pool', () => {
  const dialect = 'postgres';
  it('survives the server ending its idle connections and carries on with new ones', async () => {
    const t = await freshDatabase(dialect, { migrate: false });
    const { database } = t;
    try {
      await Promise.all([1, 2, 3].map(() => sql`select pg_sleep(0.05)`.execute(database.db)));
      const admin = new pg.Client({ connectionString: t.url });
      await admin.connect();
      const ended = await admin.query(
        'select pid, pg_terminate_backend(pid) as ok from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()',
      );
      expect(ended.rows.length).toBeGreaterThanOrEqual(1);
      // The ended backends are gone once they have sent their goodbye and closed the sockets the pool holds.
      const pids = ended.rows.map((r: { pid: number }) => r.pid);
      await eventually(
        async () => (await admin.query('select count(*)::int as n from pg_stat_activity where pid = any($1)', [pids])).rows[0].n === 0,
        15_000,
        'the ended backends to exit',
      );
      await admin.end();
      const { rows } = await sql<{ one: number }>`select 1 as one`.execute(database.db);
      expect(rows).toEqual([{ one: 1 }]);
    } finally {
      await t.close();
    }
  });
});
