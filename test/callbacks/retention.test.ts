import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pruneAttempts } from '../../src/callbacks/index.js';
import { dialects } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { FAST, MovableClock, create, eventually, info } from '../tasks/support.js';
import { startReceiver } from './receiver.js';

const HOUR = 3_600_000;

/**
 * The delivery log (`webhook_attempts`, decision 1905) is kept as long as a task's result: the
 * engine's sweep deletes attempts 24 hours old, of task callbacks and of test deliveries alike,
 * and keeps younger ones and each task's callback status.
 */
describe.each(dialects())('retention of webhook attempts on %s', (dialect) => {
  let s: TestServer;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  const clock = new MovableClock();
  let account: { id: string; key: string };

  beforeAll(async () => {
    receiver = await startReceiver(() => 200);
    s = await startServer(dialect, { ...FAST, ALLOW_PRIVATE_NETWORK: 'true' }, undefined, { clock });
    s.services.engine.start();
    s.services.callbacks.start();
    account = await s.account(10);
  });
  afterAll(async () => {
    await s.close();
    await receiver.close();
  });

  /** Creates a task with a callBackUrl and waits for its delivery to be logged. */
  async function delivered(): Promise<string> {
    const id = await create(s, account.key, 'nano-banana-2', { prompt: 'a kite' }, { callBackUrl: `${receiver.url}/hook` });
    await eventually(async () => (await log(id)).attempts.length === 1, 20_000);
    return id;
  }
  const log = async (taskId: string) => {
    const r = await s.call('GET', `/api/v1/jobs/callbacks?taskId=${taskId}`, { key: account.key });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body.data as { callback: { status: string } | null; attempts: unknown[] };
  };
  const testDeliveries = () =>
    s.services.database.db.selectFrom('webhook_attempts').select('id').where('account_id', '=', account.id).where('kind', '=', 'test').execute();

  it('deletes attempts once they are 24 hours old, and keeps younger ones', async () => {
    const old = await delivered();
    expect((await s.call('POST', '/api/v1/account/webhooks/test', { key: account.key, body: { url: `${receiver.url}/test` } })).body.data.ok).toBe(true);
    clock.advance(12 * HOUR);
    const young = await delivered();
    clock.advance(12 * HOUR + 1_000);
    // The sweep runs on the engine's next round after the clock moved.
    await eventually(async () => (await log(old)).attempts.length === 0);
    expect(await testDeliveries()).toEqual([]);
    expect((await log(young)).attempts).toHaveLength(1);
    // The callback's own status is the outbox row's: it stays.
    expect((await log(old)).callback).toMatchObject({ status: 'delivered' });
    expect((await info(s, account.key, old)).callback).toMatchObject({ status: 'delivered', attempts: 1 });
  });

  it('deletes a backlog larger than one batch in one call', async () => {
    await s.services.engine.stop(); // its sweep would take a share
    const now = clock.now();
    const rows = Array.from({ length: 2_500 }, (_, i) => ({
      id: `att_backlog_${i}`,
      account_id: account.id,
      task_id: null,
      event_id: null,
      kind: 'test' as const,
      url: 'https://example.com/hook',
      webhook_id: `msg_${i}`,
      // One in ten is younger than 24 hours.
      at: i % 10 === 0 ? now - HOUR : now - 25 * HOUR - i,
      ok: 1,
      status_code: 200,
      error: null,
      duration_ms: 1,
    }));
    for (let i = 0; i < rows.length; i += 250)
      await s.services.database.tx((trx) =>
        trx
          .insertInto('webhook_attempts')
          .values(rows.slice(i, i + 250))
          .execute(),
      );
    expect(await pruneAttempts(s.services.database, now)).toBe(2_250);
    const left = await s.services.database.db.selectFrom('webhook_attempts').select('id').where('id', 'like', 'att_backlog_%').execute();
    expect(left).toHaveLength(250);
  });
});
