// A separate process hammering the ledger, so tests see real cross-process concurrency.
// Usage: tsx ledger-worker.ts <dbUrl> <accountId> charge|refund <count> <amountMicros> <taskPrefix>
import { openDatabase } from '../../src/store/db.js';
import { Ledger } from '../../src/billing/index.js';
import { systemClock } from '../../src/clock.js';

const [dbUrl, accountId, op, countText, amountText, prefix] = process.argv.slice(2) as [string, string, string, string, string, string];
const database = openDatabase(dbUrl, { poolSize: 8 });
const ledger = new Ledger(systemClock);
const count = Number(countText);
const amount = Number(amountText);
let done = 0;
const results = await Promise.all(
  Array.from({ length: count }, async (_, i) => {
    const taskId = op === 'charge' ? `${prefix}-${process.pid}-${i}` : `${prefix}-${i}`;
    const yes = await database.tx(async (trx): Promise<boolean> =>
      op === 'charge'
        ? (await ledger.charge(trx, accountId, amount, taskId, 'test charge')).ok
        : (await ledger.refund(trx, taskId, 'refund', 'test refund')).refunded,
    );
    done++;
    return yes;
  }),
);
await database.close();
process.stdout.write(JSON.stringify({ yes: results.filter(Boolean).length, no: results.filter((x) => !x).length, done }));
