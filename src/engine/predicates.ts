/**
 * The engine's predicates over task states, spelled exactly as the partial indexes that serve them
 * are defined (migrations 006 and 007, frozen there): SQLite uses a partial index only for a query
 * that repeats its predicate, and PostgreSQL must prove the query's predicate implies the index's.
 * A change of the states needs a new migration; test/engine/claim.test.ts reads the indexes back
 * from the database and checks them against ACTIVE_STATES.
 */

/** The claim's state predicate (index tasks_active_due). */
export const ACTIVE_STATE_SQL = "state in ('waiting', 'queuing', 'generating')";
/** The states of tasks handed to a route and not finished (index tasks_backend_handed). */
export const HANDED_STATE_SQL = "state in ('queuing', 'generating')";
/** Successful tasks whose files are still kept (index tasks_files_kept). */
export const FILES_KEPT_SQL = "state = 'success' and files_expired = 0";
