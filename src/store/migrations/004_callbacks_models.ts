import type { Kysely } from 'kysely';

/** Leases on callback deliveries (several workers share them) and the operator's model switches. */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('callbacks').addColumn('locked_until', 'bigint').execute();
  await db.schema.alterTable('callbacks').addColumn('locked_by', 'text').execute();
  await db.schema
    .createTable('model_switches')
    .addColumn('model_id', 'text', (c) => c.primaryKey())
    .addColumn('enabled', 'integer', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
}
