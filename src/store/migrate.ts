import { sql } from 'kysely';
import type { Database } from './db.js';
import { MIGRATIONS, type Migration } from './migrations/index.js';

/**
 * Applies pending migrations in one transaction holding the migration lock, so two processes
 * starting at once apply each migration exactly once (the second waits, then finds nothing to do).
 */
export async function migrate(database: Database, migrations: Migration[] = MIGRATIONS): Promise<number[]> {
  const { dialect } = database;
  return database.tx(async (trx) => {
    await database.lock(trx, 'gengate:migrations');
    // On PostgreSQL two fresh starts may both try to create the table: the advisory lock above serialises them.
    await sql`create table if not exists gengate_migrations (version integer primary key, name text not null, applied_at bigint not null)`.execute(trx);
    const done = new Set((await trx.selectFrom('gengate_migrations').select('version').execute()).map((r) => Number(r.version)));
    const applied: number[] = [];
    for (const m of [...migrations].sort((a, b) => a.version - b.version)) {
      if (done.has(m.version)) continue;
      await m.up(trx, dialect);
      await trx.insertInto('gengate_migrations').values({ version: m.version, name: m.name, applied_at: Date.now() }).execute();
      applied.push(m.version);
    }
    return applied;
  });
}
