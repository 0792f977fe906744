import { sql, type Kysely } from 'kysely';

/**
 * Which API a task was created through, when it answers in another API's shapes: null for the jobs
 * API (createTask, MCP), `suno` for kie.ai's Suno endpoint `POST /api/v1/generate`, whose tasks
 * are read and called back in kie.ai's Suno shapes (decision 0404). Frozen text, like every released
 * migration: see 006.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql.raw('alter table tasks add column origin text').execute(db);
}
