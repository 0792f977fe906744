import { sql, type CompiledQuery } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/store/db.js';
import { insertRow } from '../../src/store/prepared.js';
import type { TaskState } from '../../src/store/schema.js';
import { ACTIVE_STATE_SQL, FILES_KEPT_SQL, HANDED_STATE_SQL } from '../../src/engine/predicates.js';
import { claimQuery } from '../../src/engine/engine.js';
import { handedCount } from '../../src/engine/routing.js';
import { expiringTasks } from '../../src/engine/sweep.js';
import { ACTIVE_STATES } from '../../src/tasks/states.js';
import { dialects, freshDatabase, type FreshDatabase } from '../helpers/db.js';
import { accountRow, taskRow } from '../tasks/support.js';

const NOW = 1_800_000_000_000;
const STATES: TaskState[] = ['waiting', 'queuing', 'generating', 'success', 'fail'];

/**
 * The engine's claim takes the oldest due, unleased active tasks and reads only as many rows as it
 * takes: with a backlog of thousands it must walk the partial index tasks_active_due in run_at
 * order, never sort the whole backlog (which made each claim cost O(backlog)).
 */
describe.each(dialects())('the engine claim on %s', (dialect) => {
  let t: FreshDatabase;
  let database: Database;
  const rows: Array<{ seq: number; id: string; state: TaskState; run_at: number; locked_until: number | null }> = [];
  beforeAll(async () => {
    t = await freshDatabase(dialect);
    database = t.database;
    await database.tx(async (trx) => {
      await insertRow(trx, 'accounts', accountRow('acc'));
      for (let i = 0; i < 3000; i++) {
        // A spread of states and due times (some in the future), every 7th task leased by another worker,
        // every 11th once leased (long expired: on PostgreSQL leases are judged by the database's clock).
        const state = STATES[i % STATES.length]!;
        const row = {
          id: `tk_${i}`,
          state,
          run_at: NOW - 1_000_000 + ((i * 7919) % 1_200_000),
          locked_until: i % 7 === 0 ? NOW + 60_000 : i % 11 === 0 ? 1_000 : null,
        };
        await insertRow(
          trx,
          'tasks',
          taskRow(row.id, NOW, {
            ...row,
            backend: i % 4 === 0 ? 'fal:google/nano-banana:0' : 'local',
            locked_by: row.locked_until ? 'w_other' : null,
            files_expire_at: state === 'success' ? NOW - 50_000 + i : null,
            upstream_token: i % 5 === 1 ? `tok_${i}` : null,
          }),
        );
        rows.push({ ...row, seq: i + 1 });
      }
    });
    if (dialect === 'postgres') await sql`analyze tasks`.execute(database.db);
  });
  afterAll(() => t.close());

  // The claim is a write: built on a transaction's handle (the read handle refuses writes), only compiled here.
  const claim = (n: number) => database.tx(async (trx) => claimQuery(trx, NOW, n, 30_000, 'w_me.1').compile());
  const planOf = async (c: CompiledQuery) => {
    // In a transaction: SQLite counts the plan of a write (the claim) as a write.
    const plan = await database.tx((trx) =>
      trx.executeQuery<Record<string, unknown>>({ ...c, sql: `${dialect === 'sqlite' ? 'explain query plan' : 'explain'} ${c.sql}` }),
    );
    return plan.rows.map((r) => String(r.detail ?? r['QUERY PLAN'])).join('\n');
  };

  it('defines the partial indexes by the states the engine knows, spelled as its queries spell them (a change needs a new migration)', async () => {
    const states = (text: string) => [...text.matchAll(/'([a-z]+)'/g)].map((m) => m[1]);
    // The indexes as the database holds them (the migrations' frozen text), not as the code says they are.
    const definition = async (name: string) => {
      const row =
        dialect === 'sqlite'
          ? await sql<{ def: string }>`select sql as def from sqlite_master where type = 'index' and name = ${name}`.execute(database.db)
          : await sql<{ def: string }>`select indexdef as def from pg_indexes where indexname = ${name}`.execute(database.db);
      return row.rows[0]!.def;
    };
    const cases = [
      { index: 'tasks_active_due', predicate: ACTIVE_STATE_SQL, expected: [...ACTIVE_STATES] },
      { index: 'tasks_backend_handed', predicate: HANDED_STATE_SQL, expected: ACTIVE_STATES.filter((st) => st !== 'waiting') },
      { index: 'tasks_files_kept', predicate: FILES_KEPT_SQL, expected: ['success'] },
    ];
    for (const { index, predicate, expected } of cases) {
      const def = await definition(index);
      expect(states(def)).toEqual(expected);
      expect(states(predicate)).toEqual(expected);
      // SQLite uses a partial index only for a query that repeats its predicate: the same text.
      if (dialect === 'sqlite') expect(def.endsWith(`where ${predicate}`)).toBe(true);
    }
  });

  it('reads the partial index in due order and never sorts the backlog', async () => {
    const text = await planOf(await claim(16));
    expect(text).toContain('tasks_active_due');
    expect(text).not.toMatch(/TEMP B-TREE|Sort/);
  });

  it('counts a route’s handed tasks, finds expiring files and upstream tokens through their partial indexes', async () => {
    expect(await planOf(handedCount(database.db, 'fal:google/nano-banana:0').compile())).toContain('tasks_backend_handed');
    expect(await planOf(expiringTasks(database.db, NOW).compile())).toContain('tasks_files_kept');
    const byToken = database.db.selectFrom('tasks').select('id').where('upstream_token', '=', 'tok_1');
    expect(await planOf(byToken.compile())).toContain('tasks_upstream_token');
    // And they answer what the full table says.
    const handed = rows.filter((r) => (r.state === 'queuing' || r.state === 'generating') && Number(r.id.slice(3)) % 4 === 0).length;
    expect(Number((await handedCount(database.db, 'fal:google/nano-banana:0').executeTakeFirst())?.n)).toBe(handed);
    const expiring = rows.filter((r) => r.state === 'success' && NOW - 50_000 + Number(r.id.slice(3)) <= NOW).length;
    expect((await expiringTasks(database.db, NOW).execute()).length).toBe(Math.min(200, expiring));
    expect(await byToken.execute()).toEqual([{ id: 'tk_1' }]);
  });

  it('leases the oldest due active tasks that nobody else holds, and only those', async () => {
    const due = rows
      .filter((r) => ACTIVE_STATES.includes(r.state) && r.run_at <= NOW && (r.locked_until === null || r.locked_until <= NOW))
      .sort((a, b) => a.run_at - b.run_at);
    expect(due.length).toBeGreaterThan(100);
    const first = await database.tx(
      async (trx) => (await trx.executeQuery<{ id: string; locked_by: string; attempts: number }>(claimQuery(trx, NOW, 10, 30_000, 'w_me.1').compile())).rows,
    );
    expect(first.map((r) => r.id).sort()).toEqual(
      due
        .slice(0, 10)
        .map((r) => r.id)
        .sort(),
    );
    // Each claim writes its own token and counts the attempt.
    expect(first.every((r) => r.locked_by === 'w_me.1' && Number(r.attempts) === 1)).toBe(true);
    // The next claim skips what this worker now holds.
    const second = await database.tx(
      async (trx) => (await trx.executeQuery<{ id: string; locked_by: string }>(claimQuery(trx, NOW, 10, 30_000, 'w_me.2').compile())).rows,
    );
    expect(second.map((r) => r.id).sort()).toEqual(
      due
        .slice(10, 20)
        .map((r) => r.id)
        .sort(),
    );
    expect(second.every((r) => r.locked_by === 'w_me.2')).toBe(true);
  });
});
