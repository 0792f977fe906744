import { sql, type Kysely } from 'kysely';

/**
 * The engine's claim: due tasks of the active states, oldest `run_at` first. On (state, run_at)
 * the three states are three index ranges, so the database sorted every due task on each claim
 * (a temporary B-tree of the whole backlog in SQLite): claims cost O(backlog). A partial index on
 * `run_at` holding only active tasks is read in order and stops after the first free ones; it also
 * stays small, since finished tasks (nearly all rows in time) leave it. The predicate is literal
 * and spelled exactly as the claim spells it (ACTIVE_STATE_SQL). tasks_due, which only the claim
 * used, goes: every step moves `run_at`, so each index on it costs a write.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createIndex('tasks_active_due')
    .on('tasks')
    .column('run_at')
    .where(sql.raw<boolean>(ACTIVE_STATE_SQL))
    .execute();
  await db.schema.dropIndex('tasks_due').execute();
}

/** The claim's state predicate; the partial index above is defined by the same text. */
export const ACTIVE_STATE_SQL = "state in ('waiting', 'queuing', 'generating')";
