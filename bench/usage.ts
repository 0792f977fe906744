// Usage and the money report over a million ledger entries (decision 1906): each query of a 30-day
// window timed on SQLite and, with BENCH_DATABASE_URL or TEST_DATABASE_URL, PostgreSQL, next to the
// same query with its index defeated (a full scan) measured in the same run.
// Usage: npx tsx bench/usage.ts [N] (default 1,000,000); npm run bench calls benchUsage().
import { sql, type Kysely } from 'kysely';
import { createTestDb } from '../test/helpers/db.js';
import { openDatabase, migrate, type Database, type DB } from '../src/store/index.js';
import { moneyReport, usageOf, usageQuery, type UsageGroup } from '../src/billing/index.js';

/** The goal for one usage query of a 30-day window (ms, median). */
export const USAGE_GOAL_MS = 100;
const YEAR_MS = 365 * 86_400_000;
const START = Date.UTC(2025, 0, 1);
const RUNS = 5;

export interface UsageFigure {
  dialect: 'sqlite' | 'postgres';
  entries: number;
  fillSeconds: number;
  /** Median ms per query; `big` holds a quarter of all entries, `small` about 750. */
  queries: Array<{ name: string; account: string; rows: number; ms: number; fullScanMs?: number; ratio?: number; pass?: boolean }>;
  pass: boolean;
}

/**
 * Fills `n` entries over one year in one statement per table: in each run of ten, eight charges
 * (each with its task), a refund of the first and a top-up; a quarter of the runs belong to
 * account `big`, the rest to 999 others; three keys per account, twelve models (on the entries,
 * as the ledger keeps them, and on the tasks, to time the join the ledger's copy replaced).
 */
async function fill(database: Database, n: number): Promise<void> {
  const pg = database.dialect === 'postgres';
  const step = Math.floor(YEAR_MS / n);
  const source = pg ? sql`generate_series(1, ${sql.lit(n)}) as s(i)` : sql`s`;
  const series = pg ? sql`` : sql`with recursive s(i) as (select 1 union all select i + 1 from s where i < ${sql.lit(n)}) `;
  const account = sql`(case when (i / 10) % 4 = 0 then 'big' else 'a' || ((i / 10) % 999) end)`;
  await database.tx(
    async (t) => {
      await sql`insert into accounts (id, name, status, webhook_secret, balance_micros, created_at) ${series}
        select distinct ${account}, 'bench', 'active', 'x', 0, 0 from ${source} where i <= 40000`.execute(t);
      await sql`insert into tasks (id, account_id, model, state, param, input, price_micros, final_micros, backend, run_at, deadline_at, created_at, updated_at) ${series}
        select 't' || i, ${account}, 'm' || (i % 12), 'success', '{}', '{}', 60000, 60000, 'local', 0, 0, ${sql.lit(START)} + cast(i as bigint) * ${sql.lit(step)}, 0 from ${source} where i % 10 < 8`.execute(
        t,
      );
      await sql`insert into ledger_entries (account_id, kind, amount_micros, balance_after_micros, task_id, reason, created_at, key_id, model) ${series}
        select ${account},
          case when i % 10 = 8 then 'refund' when i % 10 = 9 then 'topup' else 'charge' end,
          case when i % 10 = 8 then 60000 when i % 10 = 9 then 600000 else -60000 end,
          0,
          case when i % 10 = 8 then 't' || (i - 8) when i % 10 = 9 then null else 't' || i end,
          'bench',
          ${sql.lit(START)} + cast(i as bigint) * ${sql.lit(step)},
          case when i % 10 = 9 then null else ${account} || '_k' || ((i / 10) % 3) end,
          case when i % 10 = 8 then 'm' || ((i - 8) % 12) when i % 10 = 9 then null else 'm' || (i % 12) end
        from ${source}`.execute(t);
      await sql`update accounts set balance_micros = (select coalesce(sum(amount_micros), 0) from ledger_entries where account_id = accounts.id)`.execute(t);
    },
    { long: true },
  );
  if (pg) await sql`analyze`.execute(database.db);
}

async function median(fn: () => Promise<unknown>): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    await fn();
    times.push(performance.now() - t0);
  }
  return Math.round(times.sort((a, b) => a - b)[Math.floor(RUNS / 2)]! * 100) / 100;
}

/** The model grouping through a join with tasks instead of the ledger's copy (the alternative decision 1906 measured). */
const joinedModel = (accountId: string, from: number, to: number) =>
  sql`select t.model as g, sum(-l.amount_micros) as spent, sum(case when l.kind = 'charge' then 1 else 0 end) as tasks
    from ledger_entries l left join tasks t on t.id = l.task_id
    where l.account_id = ${accountId} and l.created_at >= ${from} and l.created_at < ${to} and l.kind in ('charge', 'refund', 'partial_refund') group by t.model`;

export async function benchUsageOn(dialect: 'sqlite' | 'postgres', n = 1_000_000): Promise<UsageFigure> {
  const testDb = await createTestDb(dialect);
  const database = openDatabase(testDb.url);
  try {
    await migrate(database);
    const t0 = performance.now();
    await fill(database, n);
    const fillSeconds = Math.round((performance.now() - t0) / 100) / 10;
    const to = START + YEAR_MS;
    const w = { from: to - 30 * 86_400_000, to };
    const db = database.db as Kysely<DB>;
    const queries: UsageFigure['queries'] = [];
    for (const account of ['big', 'a1']) {
      for (const group of ['day', 'model', 'key'] as UsageGroup[]) {
        const rows = (await usageOf(db, account, w, group)).rows.length;
        const ms = await median(() => usageOf(db, account, w, group));
        const fullScanMs = await median(() => usageQuery(account, w, group, { unindexed: true }).execute(db));
        queries.push({
          name: `usage by ${group}`,
          account,
          rows,
          ms,
          fullScanMs,
          ratio: Math.round((fullScanMs / Math.max(ms, 0.01)) * 10) / 10,
          pass: ms < USAGE_GOAL_MS,
        });
      }
      const joined = (await joinedModel(account, w.from, w.to).execute(db)).rows.length;
      queries.push({
        name: 'usage by model through a join with tasks',
        account,
        rows: joined,
        ms: await median(() => joinedModel(account, w.from, w.to).execute(db)),
      });
    }
    const report = await moneyReport(db, w, 'day');
    queries.push({ name: 'money report by day (all accounts)', account: '*', rows: report.periods.length, ms: await median(() => moneyReport(db, w, 'day')) });
    if (!report.reconciled) throw new Error('the bench ledger does not reconcile');
    return { dialect, entries: n, fillSeconds, queries, pass: queries.every((q) => q.pass !== false) };
  } finally {
    await database.close();
    await testDb.drop();
  }
}

/** SQLite always; PostgreSQL when BENCH_DATABASE_URL or TEST_DATABASE_URL is set. */
export async function benchUsage(n = Number(process.env.BENCH_USAGE_ENTRIES ?? 1_000_000)): Promise<UsageFigure[]> {
  if (process.env.BENCH_DATABASE_URL) process.env.TEST_DATABASE_URL = process.env.BENCH_DATABASE_URL;
  const out = [await benchUsageOn('sqlite', n)];
  if (process.env.TEST_DATABASE_URL) out.push(await benchUsageOn('postgres', n));
  return out;
}

export function printUsage(figures: UsageFigure[]): void {
  for (const f of figures) {
    console.log(`usage and money report, ${f.dialect}, ${f.entries} ledger entries (filled in ${f.fillSeconds} s), 30-day window, median of ${RUNS}:`);
    for (const q of f.queries) {
      const scan = q.fullScanMs === undefined ? '' : `, full scan ${q.fullScanMs} ms (${q.ratio}x)`;
      const verdict = q.pass === undefined ? '(for information)' : q.pass ? `PASS (goal < ${USAGE_GOAL_MS} ms)` : `FAIL (goal < ${USAGE_GOAL_MS} ms)`;
      console.log(`  ${q.name.padEnd(44)} account ${q.account.padEnd(4)} ${String(q.rows).padStart(3)} rows  ${q.ms} ms${scan}`, verdict);
    }
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const figures = await benchUsage(Number(process.argv[2] ?? process.env.BENCH_USAGE_ENTRIES ?? 1_000_000));
  printUsage(figures);
  process.exit(figures.every((f) => f.pass) ? 0 : 1);
}
