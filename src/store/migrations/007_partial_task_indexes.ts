import { sql, type Kysely } from 'kysely';

/**
 * Every task row sat in seven indexes, and every step of the engine (a new state, a new run_at)
 * moved its entries in most of them. Three of them serve queries about a few rows only, so they
 * become partial indexes that hold just those rows (the rest never touch them):
 * - the per-route count of handed tasks (concurrency limit, metrics): `backend` of queuing and
 *   generating tasks, not (backend, state) of all;
 * - the files sweep: `files_expire_at` of successful tasks whose files are kept, not
 *   (state, files_expired, files_expire_at) of all;
 * - the upstream callback token: unique among tasks that have one (local tasks have none).
 * The queries spell the predicates exactly as here, literally, so both databases can prove them
 * (src/engine/predicates.ts). Frozen text, like every released migration: see 006.
 */
const STATEMENTS = [
  'drop index tasks_backend_state',
  "create index tasks_backend_handed on tasks (backend) where state in ('queuing', 'generating')",
  'drop index tasks_files_expire',
  "create index tasks_files_kept on tasks (files_expire_at) where state = 'success' and files_expired = 0",
  'drop index tasks_upstream_token',
  'create unique index tasks_upstream_token on tasks (upstream_token) where upstream_token is not null',
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const text of STATEMENTS) await sql.raw(text).execute(db);
}
