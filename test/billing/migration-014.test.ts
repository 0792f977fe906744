import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { migrate, type Database } from '../../src/store/index.js';
import { dialects, freshDatabase, type FreshDatabase } from '../helpers/db.js';

describe.each(dialects())('migration 014 on %s', (dialect) => {
  let fresh: FreshDatabase;
  let database: Database;
  beforeAll(async () => {
    fresh = await freshDatabase(dialect, { before: 14 });
    database = fresh.database;
  });
  afterAll(() => fresh.close());

  it('marks the entries written before it: the model of charges and refunds, the source of card and Stripe entries', async () => {
    await database.tx(async (t) => {
      await t.insertInto('accounts').values({ id: 'acc', name: 'a', status: 'active', webhook_secret: 'x', balance_micros: 0, created_at: 0 }).execute();
      await sql`insert into tasks (id, account_id, model, state, param, input, price_micros, final_micros, backend, run_at, deadline_at, created_at, updated_at)
        values ('t1', 'acc', 'google/nano-banana', 'fail', '{}', '{}', 1, 1, 'local', 0, 0, 0, 0)`.execute(t);
      const entry = (kind: string, amount: number, reason: string, taskId: string | null = null) =>
        sql`insert into ledger_entries (account_id, kind, amount_micros, balance_after_micros, task_id, reason, created_at) values ('acc', ${kind}, ${amount}, 0, ${taskId}, ${reason}, 1)`.execute(
          t,
        );
      await entry('topup', 10, 'card top-up tu_1 (Stripe Checkout cs_1, event evt_1)');
      await entry('topup', 10, 'card top-up from the operator');
      await entry('charge', -1, 'task t1', 't1');
      await entry('refund', 1, 'failed', 't1');
      await entry('adjustment', -2, 'Stripe refund of card top-up tu_1 (refund:ch_1:200, event evt_2)');
      await entry('adjustment', -3, 'Stripe dispute of card top-up tu_1 (dispute:dp_1, event evt_3)');
      await entry('adjustment', -4, 'goodwill');
    });
    await migrate(database);
    const rows = await database.db.selectFrom('ledger_entries').select(['kind', 'amount_micros', 'model', 'source']).orderBy('id').execute();
    expect(rows.map((r) => [r.kind, Number(r.amount_micros), r.model, r.source])).toEqual([
      ['topup', 10, null, 'card'],
      ['topup', 10, null, null],
      ['charge', -1, 'google/nano-banana', null],
      ['refund', 1, 'google/nano-banana', null],
      ['adjustment', -2, null, 'stripe_refund'],
      ['adjustment', -3, null, 'stripe_dispute'],
      ['adjustment', -4, null, null],
    ]);
  });
});
