import type { Kysely } from 'kysely';
import type { Dialect } from '../db.js';

/** Tasks with their engine lease columns, task events, idempotency bindings, files and the callback outbox. */
export async function up(db: Kysely<any>, dialect: Dialect): Promise<void> {
  const serial = dialect === 'postgres' ? 'bigserial' : 'integer';
  // Booleans are 0/1 integers on both dialects so the same queries and row types work everywhere.
  await db.schema
    .createTable('tasks')
    .addColumn('seq', serial, (c) => (dialect === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement()))
    .addColumn('id', 'text', (c) => c.notNull().unique())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('model', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('param', 'text', (c) => c.notNull())
    .addColumn('input', 'text', (c) => c.notNull())
    .addColumn('media', 'text')
    .addColumn('callback_url', 'text')
    .addColumn('price_micros', 'bigint', (c) => c.notNull())
    .addColumn('final_micros', 'bigint', (c) => c.notNull())
    .addColumn('auto_length', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('is_draft', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('progress', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('result', 'text')
    .addColumn('real_seconds', 'double precision')
    .addColumn('fail_code', 'integer')
    .addColumn('fail_type', 'text')
    .addColumn('fail_msg', 'text')
    .addColumn('refunded', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('files_expired', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('files_expire_at', 'bigint')
    .addColumn('backend', 'text', (c) => c.notNull())
    .addColumn('backend_ref', 'text')
    .addColumn('run_at', 'bigint', (c) => c.notNull())
    .addColumn('deadline_at', 'bigint', (c) => c.notNull())
    .addColumn('locked_until', 'bigint')
    .addColumn('locked_by', 'text')
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('completed_at', 'bigint')
    .execute();
  await db.schema.createIndex('tasks_account_seq').on('tasks').columns(['account_id', 'seq']).execute();
  await db.schema.createIndex('tasks_account_state_seq').on('tasks').columns(['account_id', 'state', 'seq']).execute();
  await db.schema.createIndex('tasks_due').on('tasks').columns(['state', 'run_at']).execute();
  await db.schema.createIndex('tasks_files_expire').on('tasks').columns(['state', 'files_expired', 'files_expire_at']).execute();

  await db.schema
    .createTable('task_events')
    .addColumn('id', serial, (c) => (dialect === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement()))
    .addColumn('task_id', 'text', (c) => c.notNull())
    .addColumn('from_state', 'text')
    .addColumn('to_state', 'text', (c) => c.notNull())
    .addColumn('detail', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('task_events_task').on('task_events').columns(['task_id', 'id']).execute();

  await db.schema
    .createTable('idempotency_keys')
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('body_hash', 'text', (c) => c.notNull())
    .addColumn('task_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('idempotency_keys_pk', ['account_id', 'key'])
    .execute();

  await db.schema
    .createTable('files')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('task_id', 'text')
    .addColumn('purpose', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('mime', 'text', (c) => c.notNull())
    .addColumn('bytes', 'bigint', (c) => c.notNull())
    .addColumn('blob_key', 'text', (c) => c.notNull())
    .addColumn('kind', 'text')
    .addColumn('format', 'text')
    .addColumn('seconds', 'double precision')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('deleted_at', 'bigint')
    .execute();
  await db.schema.createIndex('files_task').on('files').column('task_id').execute();
  await db.schema.createIndex('files_expires').on('files').columns(['deleted_at', 'expires_at']).execute();

  // The callback outbox: a row per task with a callBackUrl; due_at is set when the task finishes (issue 6 delivers).
  await db.schema
    .createTable('callbacks')
    .addColumn('task_id', 'text', (c) => c.primaryKey())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('pending'))
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('due_at', 'bigint')
    .addColumn('last_attempt_at', 'bigint')
    .addColumn('last_status_code', 'integer')
    .addColumn('last_error', 'text')
    .addColumn('delivered_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('callbacks_due').on('callbacks').columns(['status', 'due_at']).execute();
}
