import { sql, type Kysely } from 'kysely';

/**
 * `tasks.trace_parent`: the W3C `traceparent` of the request that created the task, kept while
 * tracing is on (decision 2603) so the task's engine steps, upstream calls and callback deliveries,
 * in whatever process, join that request's trace. Null when tracing was off.
 *
 * An expand-only migration (decision 2601): a nullable column no older release reads or writes, so
 * workers of the previous release keep running beside it. Frozen text, like every released
 * migration: see 006.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql.raw('alter table tasks add column trace_parent text').execute(db);
}
