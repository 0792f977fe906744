import { sql, type Kysely } from 'kysely';

/**
 * Indexes for the operator dashboard's time windows (src/dashboard/series.ts) and the retention of
 * the delivery log. Without them each dashboard read scanned the whole `tasks` (tasks created, and
 * completed, per minute) or `webhook_attempts` table (callback attempts per minute), every refresh.
 * - `tasks_created`: tasks created from a time on.
 * - `tasks_completed`: tasks completed from a time on. Written once per task, when it finishes.
 * - `webhook_attempts_time`: attempts from a time on, and the sweep of attempts past their 24 hours.
 * Frozen text, like every released migration: see 006.
 */
const STATEMENTS = [
  'create index tasks_created on tasks (created_at)',
  'create index tasks_completed on tasks (completed_at)',
  'create index webhook_attempts_time on webhook_attempts (at)',
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const text of STATEMENTS) await sql.raw(text).execute(db);
}
