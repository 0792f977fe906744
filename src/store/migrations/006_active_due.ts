import { sql, type Kysely } from 'kysely';

/**
 * The engine's claim: due tasks of the active states, oldest `run_at` first. On (state, run_at)
 * the three states are three index ranges, so the database sorted every due task on each claim
 * (a temporary B-tree of the whole backlog in SQLite): claims cost O(backlog). A partial index on
 * `run_at` holding only active tasks is read in order and stops after the first free ones; it also
 * stays small, since finished tasks (nearly all rows in time) leave it. tasks_due, which only the
 * claim used, goes: every step moves `run_at`, so each index on it costs a write.
 *
 * Frozen text: a released migration never changes, so its SQL is written out here and imports
 * nothing the code may change later. The claim spells the predicate the same way
 * (src/engine/predicates.ts; test/engine/claim.test.ts checks the index against the engine's states).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql.raw("create index tasks_active_due on tasks (run_at) where state in ('waiting', 'queuing', 'generating')").execute(db);
  await sql.raw('drop index tasks_due').execute(db);
}
