import { sql, type CompiledQuery } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dashboardQueries, dashboardSeries, MINUTE_MS } from '../../src/dashboard/index.js';
import { insertRow, type Database, type TaskState } from '../../src/store/index.js';
import { dialects, freshDatabase, type FreshDatabase } from '../helpers/db.js';
import { accountRow, taskRow } from '../tasks/support.js';

const NOW = 1_800_000_000_000;
const TASKS = 3000;
/** A month of tasks (with a delivery attempt and a charge each), one every 15 minutes or so: the dashboard's hour holds a handful. */
const SPREAD = 30 * 86_400_000;

/**
 * The operator dashboard reads the last minutes of a table that holds months (migration 017): each
 * time window must be a range of an index, never a scan of every task or every delivery attempt.
 */
describe.each(dialects())('the dashboard reads on %s', (dialect) => {
  let t: FreshDatabase;
  let database: Database;
  const created: number[] = [];
  beforeAll(async () => {
    t = await freshDatabase(dialect);
    database = t.database;
    const states: TaskState[] = ['success', 'success', 'fail', 'success', 'generating'];
    await database.tx(async (trx) => {
      await insertRow(trx, 'accounts', accountRow('acc'));
      for (let i = 0; i < TASKS; i++) {
        const at = NOW - SPREAD + Math.floor((i / TASKS) * SPREAD);
        const state = i >= TASKS - 20 ? states[i % states.length]! : i % 9 === 0 ? 'fail' : 'success';
        created.push(at);
        const final = state === 'success' || state === 'fail';
        await insertRow(
          trx,
          'tasks',
          taskRow(`tk_${i}`, at, {
            state,
            callback_url: 'https://example.com/hook',
            completed_at: final ? at + 5_000 : null,
            fail_code: state === 'fail' ? 500 : null,
          }),
        );
        await trx
          .insertInto('webhook_attempts')
          .values({
            id: `att_${i}`,
            account_id: 'acc',
            task_id: `tk_${i}`,
            event_id: null,
            kind: 'delivery',
            url: 'https://example.com/hook',
            webhook_id: `msg_${i}`,
            at: at + 6_000,
            ok: 1,
            status_code: 200,
            error: null,
            duration_ms: 3,
          })
          .execute();
        await trx
          .insertInto('ledger_entries')
          .values({ account_id: 'acc', kind: 'charge', amount_micros: -1, balance_after_micros: 0, task_id: `tk_${i}`, reason: 'task', created_at: at })
          .execute();
      }
    });
    if (dialect === 'postgres') await sql`analyze`.execute(database.db);
  });
  afterAll(() => t.close());

  const planOf = async (c: CompiledQuery) => {
    const plan = await database.db.executeQuery<Record<string, unknown>>({ ...c, sql: `${dialect === 'sqlite' ? 'explain query plan' : 'explain'} ${c.sql}` });
    return plan.rows.map((r) => String(r.detail ?? r['QUERY PLAN'])).join('\n');
  };

  it('reads each time window through its index', async () => {
    const q = dashboardQueries(database.db, NOW - 60 * MINUTE_MS);
    const expected = {
      created: 'tasks_created',
      completed: 'tasks_completed',
      failures: 'tasks_completed',
      active: 'tasks_active_due',
      attempts: 'webhook_attempts_time',
      money: 'ledger_time',
    };
    for (const [name, index] of Object.entries(expected)) {
      const plan = await planOf(q[name as keyof typeof q].compile());
      expect(plan, name).toContain(index);
      // A scan of the table itself (SQLite: "SCAN tasks" without an index; PostgreSQL: "Seq Scan").
      expect(plan, name).not.toMatch(/SCAN (tasks|webhook_attempts)$|Seq Scan/m);
    }
  });

  it('counts what the rows say', async () => {
    const minutes = 24 * 60;
    const d = await dashboardSeries(database, NOW, minutes);
    const start = d.minutes[0]!;
    const inWindow = created.filter((at) => at >= start).length;
    expect(d.tasks.created.reduce((a, b) => a + b, 0)).toBe(inWindow);
    expect(d.callbacks.delivered.reduce((a, b) => a + b, 0)).toBe(created.filter((at) => at + 6_000 >= start).length);
    expect(d.money.chargedMicros.reduce((a, b) => a + b, 0)).toBe(inWindow);
    expect(d.now).toEqual({ waiting: 0, queuing: 0, generating: 4 });
  });
});
