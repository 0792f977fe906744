import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { createHmac } from 'node:crypto';
import { dialects } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { FAST, create, eventually, info, settle } from '../tasks/support.js';
import { closedPort, startReceiver } from './receiver.js';

type Receiver = Awaited<ReturnType<typeof startReceiver>>;

describe.each(dialects())('callbacks on %s', (dialect) => {
  let s: TestServer;
  let r: Receiver;
  let account: { id: string; key: string };
  let secret: string;
  beforeAll(async () => {
    r = await startReceiver((path, count) => {
      if (path.startsWith('/flaky')) return count === 1 ? 500 : 200;
      if (path.startsWith('/slow')) return 'hang';
      if (path.startsWith('/redirect')) return { redirect: `${r.url}/target` };
      return 200;
    });
    s = await startServer(dialect, { ...FAST, ALLOW_PRIVATE_NETWORK: 'true', CALLBACK_RETRY_DELAYS_MS: '50,50', CALLBACK_TIMEOUT_MS: '300' });
    s.services.engine.start();
    s.services.callbacks.start();
    account = await s.account(10);
    secret = await s.services.accounts.webhookSecret(account.id);
  });
  afterAll(async () => {
    await s.close();
    await r.close();
  });

  /** Creates a task that reports to `path` of the receiver and waits until its callback is no longer pending. */
  async function run(path: string, prompt = 'a cat', url = `${r.url}${path}`) {
    const id = await create(s, account.key, 'nano-banana-2', { prompt }, { callBackUrl: url });
    const task = await eventually(async () => {
      const t = await info(s, account.key, id);
      if (!t.callback || t.callback.status === 'pending') throw new Error(`callback still ${JSON.stringify(t.callback)}`);
      return t;
    }, 20_000);
    return { id, task };
  }

  it('wakes delivery only for finished tasks that have a callBackUrl', async () => {
    const due: string[] = [];
    const listen = (id: string) => due.push(id);
    s.services.tasks.signals.on('callbackDue', listen);
    try {
      const without = await create(s, account.key, 'nano-banana-2', { prompt: 'no callback' });
      await settle(s, account.key, without);
      const { id } = await run('/ok');
      expect(due).toEqual([id]);
    } finally {
      s.services.tasks.signals.off('callbackDue', listen);
    }
  });

  it('delivers a success with the recordInfo Task, signed both ways', async () => {
    const { id, task } = await run('/ok');
    expect(task.callback).toMatchObject({ url: `${r.url}/ok`, status: 'delivered', attempts: 1, lastStatusCode: 200, lastError: null });
    expect(task.callback.deliveredAt).toEqual(expect.any(Number));
    const [got] = r.at('/ok').filter((x) => JSON.parse(x.body).taskId === id);
    const body = JSON.parse(got!.body);
    expect(body).toMatchObject({ code: 200, msg: 'success', taskId: id, data: { taskId: id, state: 'success', callbackType: 'task_completed' } });
    const { callback: _c, updateTime: _u, callbackType: _t, ...sent } = body.data;
    const { callback: _c2, updateTime: _u2, ...shown } = task;
    expect(sent).toEqual(shown);
    expect(got!.headers['webhook-id']).toBe(`msg_${id}`);
    expect(new Webhook(secret).verify(got!.body, got!.headers as Record<string, string>)).toEqual(body);
    const legacy = createHmac('sha256', secret).update(`${id}.${got!.headers['x-webhook-timestamp']}`).digest('base64');
    expect(got!.headers['x-webhook-signature']).toBe(legacy);
    expect(() => new Webhook(Buffer.from('another secret').toString('base64')).verify(got!.body, got!.headers as Record<string, string>)).toThrow();
  });

  it('reports a failure with code 501, the failMsg and task_failed', async () => {
    const { id, task } = await run('/ok-fail', 'a cat gengate:fail=501');
    expect(task.state).toBe('fail');
    const body = JSON.parse(r.at('/ok-fail').find((x) => JSON.parse(x.body).taskId === id)!.body);
    expect(body).toMatchObject({ code: 501, msg: task.failMsg, taskId: id, data: { state: 'fail', refunded: true, callbackType: 'task_failed' } });
  });

  it('retries after a 500 with the same webhook-id, then delivers', async () => {
    const { id, task } = await run('/flaky');
    expect(task.callback).toMatchObject({ status: 'delivered', attempts: 2, lastStatusCode: 200, lastError: null });
    const tries = r.at('/flaky');
    expect(tries).toHaveLength(2);
    expect(tries.map((t) => t.headers['webhook-id'])).toEqual([`msg_${id}`, `msg_${id}`]);
  });

  it('gives up after the last retry when the receiver never answers in time', async () => {
    const { task } = await run('/slow');
    expect(task.callback).toMatchObject({ status: 'failed', attempts: 3, lastStatusCode: null, deliveredAt: null });
    expect(task.callback.lastError).toMatch(/within 300 ms/);
  });

  it('does not follow redirects', async () => {
    const { task } = await run('/redirect');
    expect(task.callback).toMatchObject({ status: 'failed', attempts: 3, lastStatusCode: 302 });
    expect(task.callback.lastError).toMatch(/redirect .*not followed/);
    expect(r.at('/target')).toHaveLength(0);
  });

  it('records a refused connection and fails after the retries', async () => {
    const { task } = await run('/x', 'a cat', `http://127.0.0.1:${await closedPort()}/hook`);
    expect(task.callback).toMatchObject({ status: 'failed', attempts: 3, lastStatusCode: null, lastError: 'connection refused' });
  });

  it('takes over a delivery whose worker died holding the lease (restart)', async () => {
    const id = await create(s, account.key, 'nano-banana-2', { prompt: 'a cat' }, { callBackUrl: `${r.url}/orphan` });
    // The first delivery is made; then the worker stops (after its deliveries in progress).
    await eventually(async () => (await info(s, account.key, id)).callback?.status === 'delivered', 15_000, 'the first delivery');
    await s.services.callbacks.stop();
    // Another process claimed it and died: its lease ran out in the past.
    await s.services.database.tx((w) =>
      w
        .updateTable('callbacks')
        .set({ status: 'pending', attempts: 0, delivered_at: null, locked_by: 'cb_dead', locked_until: Date.now() - 1 })
        .where('task_id', '=', id)
        .execute(),
    );
    const before = r.at('/orphan').length;
    s.services.callbacks.start();
    // Read from the table: recordInfo may keep the view it showed once the first delivery had settled
    // (a settled callback never goes back to pending, except by this test's hand).
    const t = await eventually(async () => {
      const x = await s.services.database.db.selectFrom('callbacks').selectAll().where('task_id', '=', id).executeTakeFirstOrThrow();
      if (x.status !== 'delivered' || Number(x.attempts) !== 1) throw new Error(JSON.stringify(x));
      return x;
    });
    expect(t.status).toBe('delivered');
    expect(r.at('/orphan').length).toBe(before + 1);
  });
});
