import { sql, type Kysely } from 'kysely';
import type { DB, KeyBudgetPeriod } from '../store/index.js';
import { prepared } from '../store/index.js';
import { periodStart } from './periods.js';

/** Moves a key's spend by `delta` in its running total, the UTC day and the UTC month (one statement; rows made on first use). */
const spendStatement = prepared(4, (db: Kysely<DB>, keyId, day, month, delta) =>
  db
    .insertInto('key_spend')
    .values([
      { key_id: keyId, period: 'total', starts_at: 0, spent_micros: delta as unknown as number },
      { key_id: keyId, period: 'day', starts_at: day as unknown as number, spent_micros: delta as unknown as number },
      { key_id: keyId, period: 'month', starts_at: month as unknown as number, spent_micros: delta as unknown as number },
    ])
    .onConflict((oc) => oc.columns(['key_id', 'period', 'starts_at']).doUpdateSet({ spent_micros: sql`key_spend.spent_micros + excluded.spent_micros` })),
);

const DAY_MS = 86_400_000;
/** Rows per insert while filling counters (4 parameters each: far below both databases' limits). */
const FILL_CHUNK = 500;

/** Moves the key's spend counters for a charge made at `at` (negative `delta`: its refund). */
export async function moveKeySpend(trx: Kysely<DB>, keyId: string, at: number, delta: number): Promise<void> {
  await spendStatement(trx, keyId, periodStart('day', at), periodStart('month', at), delta);
}

/** The key's spend counter of the `period` holding `at` (0 when it has none). */
export async function readKeySpend(db: Kysely<DB>, keyId: string, period: KeyBudgetPeriod, at: number): Promise<number> {
  const row = await db
    .selectFrom('key_spend')
    .select('spent_micros')
    .where('key_id', '=', keyId)
    .where('period', '=', period)
    .where('starts_at', '=', periodStart(period, at))
    .executeTakeFirst();
  return row ? Number(row.spent_micros) : 0;
}

/**
 * Makes the account keep its keys' spend counters from now on, inside the caller's transaction
 * (decision 1902). The first time, it fills them from the ledger: per key, its charges less their
 * refunds, in total and in the UTC day and month of each charge. The switch is an update of the
 * account's row, the row every charge and refund updates first (and reads `key_spend_kept` from),
 * so the two are serialised by its lock: a charge that locked the row first commits before the
 * switch goes on, and the fill, a later statement, reads its entry (SQLite has one writer;
 * PostgreSQL reads each statement of a READ COMMITTED transaction at its own snapshot); a charge
 * that comes after reads the switch on and moves the counters itself. So no charge or refund is
 * counted twice or missed, whatever its process believed about the key's budget. Costs one read
 * of the account's ledger, once.
 */
export async function keepKeySpend(trx: Kysely<DB>, accountId: string): Promise<void> {
  const switched = await trx.updateTable('accounts').set({ key_spend_kept: 1 }).where('id', '=', accountId).where('key_spend_kept', '=', 0).executeTakeFirst();
  if (Number(switched.numUpdatedRows) === 0) return;
  // A refund counts in the period of its charge; both carry the key (ledger_entries.key_id).
  const { rows } = await sql<{ key_id: string; day: number | string; spent: number | string }>`
    select e.key_id as key_id, coalesce(c.created_at, e.created_at) - coalesce(c.created_at, e.created_at) % ${sql.lit(DAY_MS)} as day,
      -sum(e.amount_micros) as spent
    from ledger_entries e
    left join ledger_entries c on e.task_id is not null and c.task_id = e.task_id and c.kind = 'charge'
    where e.account_id = ${accountId} and e.key_id is not null
    group by e.key_id, coalesce(c.created_at, e.created_at) - coalesce(c.created_at, e.created_at) % ${sql.lit(DAY_MS)}`.execute(trx);
  const counters = new Map<string, { key_id: string; period: KeyBudgetPeriod; starts_at: number; spent_micros: number }>();
  const add = (keyId: string, period: KeyBudgetPeriod, startsAt: number, spent: number) => {
    const k = `${keyId} ${period} ${startsAt}`;
    const row = counters.get(k) ?? { key_id: keyId, period, starts_at: startsAt, spent_micros: 0 };
    row.spent_micros += spent;
    counters.set(k, row);
  };
  for (const r of rows) {
    const day = Number(r.day);
    const spent = Number(r.spent);
    add(r.key_id, 'total', 0, spent);
    add(r.key_id, 'day', day, spent);
    add(r.key_id, 'month', periodStart('month', day), spent);
  }
  await trx
    .deleteFrom('key_spend')
    .where('key_id', 'in', (eb) => eb.selectFrom('api_keys').select('id').where('account_id', '=', accountId))
    .execute();
  const all = [...counters.values()];
  for (let i = 0; i < all.length; i += FILL_CHUNK)
    await trx
      .insertInto('key_spend')
      .values(all.slice(i, i + FILL_CHUNK))
      .execute();
}
