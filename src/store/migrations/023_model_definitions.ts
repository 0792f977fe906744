import type { Kysely } from 'kysely';
import type { Dialect } from '../db.js';

/**
 * Model definitions kept in the database (issue 33 item 3, decision 3304): every change an operator
 * makes through the admin API, the CLI or the console is a row of `model_definition_versions`
 * (who, when, what: create, edit, retire, restore, with the definition's JSON); `model_definitions`
 * holds the version in force per model. Its `id` is the catalog's generation: every process polls
 * `max(id)` and reloads when it moves. `tasks.model_version` is the version a task was created
 * with (null: the definition file's).
 *
 * Expand-only (decision 2601): new tables and a nullable column that older releases never read.
 * Frozen text, like every released migration.
 */
export async function up(db: Kysely<any>, dialect: Dialect): Promise<void> {
  const serial = dialect === 'postgres' ? 'bigserial' : 'integer';
  await db.schema
    .createTable('model_definition_versions')
    .addColumn('id', serial, (c) => (dialect === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement()))
    .addColumn('model_id', 'text', (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('body', 'text')
    .addColumn('who', 'text', (c) => c.notNull())
    .addColumn('note', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('model_definition_versions_model_version', ['model_id', 'version'])
    .execute();
  await db.schema
    .createTable('model_definitions')
    .addColumn('model_id', 'text', (c) => c.primaryKey())
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('retired', 'integer', (c) => c.notNull())
    .addColumn('body', 'text')
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.alterTable('tasks').addColumn('model_version', 'integer').execute();
}
