import { sql, type Kysely } from 'kysely';

/**
 * The kie.ai dialect of results (DECISIONS §18, decision 0402): an account's dialect, set by the
 * operator, and each task's, fixed when the task is created ('kie' under a kie.ai model id or for
 * an account in the kie dialect). A task's view reads its own column only, so changing an account
 * never changes the shape of a task it already has. Every existing row is 'gengate': nothing of
 * the existing API changes. Frozen text, like every released migration: see 006.
 */
const STATEMENTS = [
  "alter table accounts add column dialect text not null default 'gengate' check (dialect in ('gengate', 'kie'))",
  "alter table tasks add column dialect text not null default 'gengate' check (dialect in ('gengate', 'kie'))",
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const text of STATEMENTS) await sql.raw(text).execute(db);
}
