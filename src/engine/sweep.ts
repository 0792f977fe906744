import { sql, type Kysely } from 'kysely';
import { FILES_KEPT_SQL } from './predicates.js';
import type { DB } from '../store/index.js';
import { pruneAttempts } from '../callbacks/index.js';
import { endUnexchangedConsents } from '../oauth/index.js';
import type { EngineDeps } from './deps.js';

const BATCH = 200;

/**
 * Retention (DECISIONS §9): deletes files past their expiry (results and uploads), then marks
 * successful tasks whose 24 hours have passed `files_expired` with a task_events row. Links
 * already answer 404 from the expiry time on, whether or not the sweep has run. Then the other
 * clean-ups of things past their time: the webhook delivery log, and OAuth consents whose code
 * expired unexchanged (their grant and key end).
 */
export async function sweepExpired(deps: EngineDeps): Promise<void> {
  const { database, clock, files } = deps;
  const now = clock.now();
  const expired = await database.db
    .selectFrom('files')
    .select(['id', 'blob_key'])
    .where('deleted_at', 'is', null)
    .where('expires_at', '<=', now)
    .limit(BATCH)
    .execute();
  for (const f of expired) {
    // Bytes first: if the process dies in between, the row is still there and the next sweep retries.
    await files.blobs.delete(f.blob_key);
    await database.tx((w) => w.updateTable('files').set({ deleted_at: now }).where('id', '=', f.id).execute(), { atomic: false });
  }
  const tasks = await expiringTasks(database.db, now).execute();
  for (const t of tasks) {
    await database.tx(async (trx) => {
      const res = await trx
        .updateTable('tasks')
        .set({ files_expired: 1, updated_at: now })
        .where('id', '=', t.id)
        .where('files_expired', '=', 0)
        .executeTakeFirst();
      if (Number(res.numUpdatedRows) === 1) {
        await trx.insertInto('task_events').values({ task_id: t.id, from_state: 'success', to_state: 'success', detail: 'files expired', at: now }).execute();
      }
    });
  }
  await pruneAttempts(database, now);
  await endUnexchangedConsents(database, now);
}

/** Successful tasks whose files are kept but due to go; reads the partial index tasks_files_kept (migration 007). */
export function expiringTasks(db: Kysely<DB>, now: number) {
  return db.selectFrom('tasks').select('id').where(sql.raw<boolean>(FILES_KEPT_SQL)).where('files_expire_at', '<=', now).limit(BATCH);
}
