import { sql, type Kysely } from 'kysely';

/** The states of tasks handed to a route and not finished; the partial index below is defined by this text. */
export const HANDED_STATE_SQL = "state in ('queuing', 'generating')";
/** Successful tasks whose files are still kept; the partial index below is defined by this text. */
export const FILES_KEPT_SQL = "state = 'success' and files_expired = 0";

/**
 * Every task row sat in seven indexes, and every step of the engine (a new state, a new run_at)
 * moved its entries in most of them. Three of them serve queries about a few rows only, so they
 * become partial indexes that hold just those rows (the rest never touch them):
 * - the per-route count of handed tasks (concurrency limit, metrics): `backend` of queuing and
 *   generating tasks, not (backend, state) of all;
 * - the files sweep: `files_expire_at` of successful tasks whose files are kept, not
 *   (state, files_expired, files_expire_at) of all;
 * - the upstream callback token: unique among tasks that have one (local tasks have none).
 * The queries spell the predicates exactly as here (HANDED_STATE_SQL, FILES_KEPT_SQL), literally,
 * so both databases can prove them.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('tasks_backend_state').execute();
  await db.schema.createIndex('tasks_backend_handed').on('tasks').column('backend').where(sql.raw<boolean>(HANDED_STATE_SQL)).execute();
  await db.schema.dropIndex('tasks_files_expire').execute();
  await db.schema.createIndex('tasks_files_kept').on('tasks').column('files_expire_at').where(sql.raw<boolean>(FILES_KEPT_SQL)).execute();
  await db.schema.dropIndex('tasks_upstream_token').execute();
  await db.schema
    .createIndex('tasks_upstream_token')
    .on('tasks')
    .column('upstream_token')
    .unique()
    .where(sql.raw<boolean>('upstream_token is not null'))
    .execute();
}
