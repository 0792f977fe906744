import { sql } from 'kysely';
import type { Database } from './db.js';
import { MIGRATIONS, type Migration } from './migrations/index.js';

/** The database holds migrations this code does not know: a newer version migrated it. */
export class DatabaseTooNew extends Error {
  override name = 'DatabaseTooNew';
}

/**
 * Applies pending migrations in one transaction holding the migration lock, so two processes
 * starting at once apply each migration exactly once (the second waits, then finds nothing to do).
 * A database migrated by a newer version is left as it is; with `refuseNewer` (a process that
 * runs tasks) it is refused with DatabaseTooNew: an older engine could write rows a newer schema
 * gives another meaning. An older API process may keep serving during a rolling upgrade.
 */
export async function migrate(database: Database, opts: { migrations?: Migration[]; refuseNewer?: boolean } = {}): Promise<number[]> {
  const { dialect } = database;
  const migrations = [...(opts.migrations ?? MIGRATIONS)].sort((a, b) => a.version - b.version);
  return database.tx(
    async (trx) => {
      await database.lock(trx, 'gengate:migrations');
      // On PostgreSQL two fresh starts may both try to create the table: the advisory lock above serialises them.
      await sql`create table if not exists gengate_migrations (version integer primary key, name text not null, applied_at bigint not null)`.execute(trx);
      const done = (await trx.selectFrom('gengate_migrations').select(['version', 'name']).execute()).map((r) => ({
        version: Number(r.version),
        name: r.name,
      }));
      const known = new Set(migrations.map((m) => m.version));
      const unknown = done.filter((d) => !known.has(d.version));
      if (unknown.length > 0 && opts.refuseNewer) {
        const names = unknown.map((d) => `${d.version} (${d.name})`).join(', ');
        throw new DatabaseTooNew(
          `the database was migrated by a newer GenGate: migration ${names} is unknown to this version, which knows up to ${migrations.at(-1)?.version ?? 0}. ` +
            'A process that runs tasks (ROLE=worker or all) refuses it; upgrade this process, or run it as ROLE=api until it is upgraded.',
        );
      }
      const applied: number[] = [];
      for (const m of migrations) {
        if (done.some((d) => d.version === m.version)) continue;
        await m.up(trx, dialect);
        await trx.insertInto('gengate_migrations').values({ version: m.version, name: m.name, applied_at: Date.now() }).execute();
        applied.push(m.version);
      }
      return applied;
    },
    { long: true },
  );
}
