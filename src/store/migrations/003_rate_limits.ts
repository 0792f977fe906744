import type { Kysely } from 'kysely';

/** Per-account overrides of the per-key rate limits (null = the configured default). */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('accounts').addColumn('rate_write_limit', 'integer').execute();
  await db.schema.alterTable('accounts').addColumn('rate_read_limit', 'integer').execute();
}
