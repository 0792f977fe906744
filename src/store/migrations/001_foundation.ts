import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../db.js';

/** Accounts, API keys and the append-only ledger. */
export async function up(db: Kysely<any>, dialect: Dialect): Promise<void> {
  await db.schema
    .createTable('accounts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('active'))
    .addColumn('webhook_secret', 'text', (c) => c.notNull())
    .addColumn('balance_micros', 'bigint', (c) => c.notNull().defaultTo(0).check(sqlNonNegative('balance_micros')))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('api_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('hash', 'text', (c) => c.notNull().unique())
    .addColumn('prefix', 'text', (c) => c.notNull())
    .addColumn('scopes', 'text')
    .addColumn('models', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('revoked_at', 'bigint')
    .addColumn('last_used_at', 'bigint')
    .execute();
  await db.schema.createIndex('api_keys_account').on('api_keys').column('account_id').execute();

  await db.schema
    .createTable('ledger_entries')
    .addColumn('id', dialect === 'postgres' ? 'bigserial' : 'integer', (c) => (dialect === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement()))
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('amount_micros', 'bigint', (c) => c.notNull())
    .addColumn('balance_after_micros', 'bigint', (c) => c.notNull())
    .addColumn('task_id', 'text')
    .addColumn('reason', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('ledger_account').on('ledger_entries').columns(['account_id', 'id']).execute();
  // At most one entry of each kind per task: one charge, one refund, one partial refund.
  await db.schema.createIndex('ledger_task_kind').on('ledger_entries').columns(['task_id', 'kind']).unique().execute();
}

function sqlNonNegative(column: string) {
  return sql`${sql.ref(column)} >= 0`;
}
