import type { Database } from '../store/index.js';
import { FILE_RETENTION_MS } from '../tasks/index.js';

/** Attempts deleted per statement, and at most this many statements per sweep (the sweep runs every few seconds). */
const BATCH = 1000;
const BATCHES = 10;

/**
 * Retention of the delivery log (`webhook_attempts`, decision 1905): an attempt is kept as long as
 * a task's result is (24 hours, SPEC Limits; not a setting), then the engine's sweep deletes it.
 * Each batch is one short delete of the oldest rows, found through `webhook_attempts_time`
 * (migration 017); a backlog larger than one sweep's share goes in the next sweeps. The task's
 * `callback` status (recordInfo) is the outbox row's and stays. Returns how many were deleted.
 */
export async function pruneAttempts(database: Database, now: number): Promise<number> {
  const before = now - FILE_RETENTION_MS;
  let deleted = 0;
  for (let i = 0; i < BATCHES; i++) {
    const n = await database.tx(
      async (trx) => {
        const oldest = trx.selectFrom('webhook_attempts').select('id').where('at', '<', before).limit(BATCH);
        return Number((await trx.deleteFrom('webhook_attempts').where('id', 'in', oldest).executeTakeFirst()).numDeletedRows);
      },
      { atomic: false },
    );
    deleted += n;
    if (n < BATCH) break;
  }
  return deleted;
}
