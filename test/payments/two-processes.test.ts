import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { buildServices, type Services } from '../../src/services.js';
import { spawnServe, stop } from '../helpers/cli.js';
import { createTestDb, dialects, type TestDb } from '../helpers/db.js';
import { UNLIMITED, expectLedgerInvariant } from '../tasks/support.js';
import { SECRET_KEY, WEBHOOK_SECRET, completed, deliver, disputeWon, disputed, refunded, signed, startFakeStripe } from '../fakes/stripe.js';

const USD = 1_000_000;

/** Two real `gengate serve` processes over one database, both receiving Stripe's events: each is applied once. */
describe.each(dialects())('Stripe events delivered to two processes at once (%s)', (dialect) => {
  let db: TestDb;
  let stripe: Awaited<ReturnType<typeof startFakeStripe>>;
  let services: Services;
  const children: ChildProcess[] = [];
  const urls: string[] = [];

  beforeAll(async () => {
    db = await createTestDb(dialect);
    stripe = await startFakeStripe();
    const env = {
      DATA_DIR: db.dir,
      DATABASE_URL: db.url,
      FIRST_RUN_ACCOUNT: 'false',
      MODERATION_IMAGES: 'off',
      GENGATE_SECRET_KEY: 'stripe-two-process-secret-0123456789abcdef',
      STRIPE_SECRET_KEY: SECRET_KEY,
      STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
      STRIPE_API_BASE: stripe.url,
      AUTH_CACHE_MS: '0',
      ...UNLIMITED,
    };
    // Migrates the database before the processes start (one of them would otherwise wait for the other's migration lock).
    services = await buildServices(loadConfig({ ...env, LOG_LEVEL: 'silent' }), { upstreams: false });
    for (let i = 0; i < 2; i++) {
      const p = await spawnServe(env, ['--role', 'api']);
      children.push(p.child);
      urls.push(p.url);
    }
  }, 240_000);
  afterAll(async () => {
    for (const c of children.splice(0)) await stop(c, 'SIGKILL');
    await services?.close();
    await stripe?.close();
    await db?.drop();
  });

  it('credits a completed session once, and applies a refund, a dispute and its win once, whichever process gets them', async () => {
    const { account, apiKey } = await services.accounts.create('two', 0);
    const started = await fetch(`${urls[0]}/api/v1/topups`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ amount: '40' }),
    });
    expect(started.status).toBe(200);
    const session = stripe.session(((await started.json()) as { data: { sessionId: string } }).data.sessionId);

    const everywhere = async (delivery: { body: string; signature: string }, times = 4) =>
      (await Promise.all(Array.from({ length: times }, (_, i) => deliver(urls[i % 2]!, delivery)))).map((r) => {
        expect(r.status).toBe(200);
        return r.body.outcome as string;
      });

    const credit = await everywhere(signed(completed(session)), 6);
    expect(credit.filter((o) => o === 'credited')).toHaveLength(1);
    expect(credit.filter((o) => o !== 'credited')).toEqual(Array(5).fill('already_credited'));
    expect(await services.accounts.balanceMicros(account.id)).toBe(40 * USD);

    const refund = await everywhere(signed(refunded(session, 1500)));
    expect(refund.filter((o) => o === 'reversal_applied')).toHaveLength(1);
    const dispute = await everywhere(signed(disputed(session, 2500, 'dp_test_two')));
    expect(dispute.filter((o) => o === 'reversal_applied')).toHaveLength(1);
    expect(await services.accounts.balanceMicros(account.id)).toBe(0);
    // The win, as two events (Stripe's retry under a new id) each sent to both processes at once.
    const won = await Promise.all([everywhere(signed(disputeWon(session, 2500, 'dp_test_two'))), everywhere(signed(disputeWon(session, 2500, 'dp_test_two')))]);
    expect(won.flat().filter((o) => o === 'dispute_won')).toHaveLength(1);
    expect(won.flat().filter((o) => o !== 'dispute_won')).toEqual(Array(7).fill('duplicate'));
    expect(await services.accounts.balanceMicros(account.id)).toBe(25 * USD);

    const ledger = await services.ledger.entries(services.database.db, account.id);
    expect(ledger.map((e) => [e.kind, e.amountMicros])).toEqual([
      ['topup', 40 * USD],
      ['adjustment', -15 * USD],
      ['adjustment', -25 * USD],
      ['adjustment', 25 * USD],
    ]);
    await expectLedgerInvariant(services.database);
  });
});
