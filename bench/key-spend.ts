// What the per-key spend counters cost a charge, and what the budget check's read costs
// (decision 1902). Usage: npx tsx bench/key-spend.ts sqlite|postgres [N] (postgres: TEST_DATABASE_URL).
import { createTestDb } from '../test/helpers/db.js';
import { openDatabase, migrate } from '../src/store/index.js';
import { Ledger } from '../src/billing/index.js';

const dialect = (process.argv[2] ?? 'sqlite') as 'sqlite' | 'postgres';
const n = Number(process.argv[3] ?? 2000);
const testDb = await createTestDb(dialect);
const database = openDatabase(testDb.url);
await migrate(database);
const ledger = new Ledger({ now: () => Date.now() });
await database.tx((t) =>
  t.insertInto('accounts').values({ id: 'acc', name: 'b', status: 'active', webhook_secret: 'x', balance_micros: 1e12, created_at: 0 }).execute(),
);

/** Median ms of one transaction doing `fn`, over n sequential transactions. */
async function median(fn: (i: number) => (t: never) => Promise<unknown>): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await database.tx(fn(i) as never);
    times.push(performance.now() - t0);
  }
  return times.sort((a, b) => a - b)[Math.floor(n / 2)]!;
}
const plain = await median((i) => (t) => ledger.charge(t, 'acc', 60_000, `a_${i}`, 'bench'));
// The account keeps its keys' spend (as once a key of it has a budget): the charge moves the counters.
await database.tx((t) => ledger.keepKeySpend(t, 'acc'));
const keyed = await median((i) => (t) => ledger.charge(t, 'acc', 60_000, `b_${i}`, 'bench', 'key'));
const read = await median(() => (t) => ledger.keySpend(t, 'key', 'month', Date.now()));
console.log(
  `${dialect}, ${n} transactions each: charge ${plain.toFixed(3)} ms, charge with key counters ${keyed.toFixed(3)} ms, budget read ${read.toFixed(3)} ms (medians)`,
);
await database.close();
await testDb.drop();
