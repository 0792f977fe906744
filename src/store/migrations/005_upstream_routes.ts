import type { Kysely } from 'kysely';

/**
 * Issue 8: which route of its model a task is on (fail-over moves it forward), the token of its
 * upstream callback URL, and when it was handed off (polling backs off from there). The index
 * serves the per-route concurrency count.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('tasks')
    .addColumn('route_index', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.alterTable('tasks').addColumn('upstream_token', 'text').execute();
  await db.schema.alterTable('tasks').addColumn('handed_at', 'bigint').execute();
  await db.schema.createIndex('tasks_upstream_token').on('tasks').column('upstream_token').unique().execute();
  await db.schema.createIndex('tasks_backend_state').on('tasks').columns(['backend', 'state']).execute();
}
