import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { FAST, eventually, info } from '../tasks/support.js';
import { startReceiver } from './receiver.js';

describe.each(dialects())('callbacks to private addresses on %s (ALLOW_PRIVATE_NETWORK off)', (dialect) => {
  let s: TestServer;
  let r: Awaited<ReturnType<typeof startReceiver>>;
  beforeAll(async () => {
    r = await startReceiver(() => 200);
    s = await startServer(dialect, { ...FAST, CALLBACK_RETRY_DELAYS_MS: '20', CALLBACK_TIMEOUT_MS: '500' });
    s.services.engine.start();
    s.services.callbacks.start();
  });
  afterAll(async () => {
    await s.close();
    await r.close();
  });

  it.each(['http://127.0.0.1:9/x', 'http://[::1]/x', 'http://169.254.169.254/latest/meta-data', 'http://10.0.0.8/hook', 'http://localhost:9/x'])(
    'refuses callBackUrl %s at creation, charging nothing',
    async (url) => {
      const a = await s.account(1);
      const res = await s.call('POST', '/api/v1/jobs/createTask', {
        key: a.key,
        body: { model: 'nano-banana-2', input: { prompt: 'a cat' }, callBackUrl: url },
      });
      expect(res.status).toBe(400);
      expect(res.body.msg).toMatch(/^callBackUrl must reach a public address/);
      expect((await s.call('GET', '/api/v1/user/balance', { key: a.key })).body.data.balance).toBe('1.0000');
    },
  );

  it('refuses at delivery time a URL that has come to resolve to a private address (DNS rebinding)', async () => {
    const a = await s.account(1);
    // Accepted at creation (a public literal), then "re-pointed": the delivery-time check must catch it.
    const res = await s.call('POST', '/api/v1/jobs/createTask', {
      key: a.key,
      body: { model: 'nano-banana-2', input: { prompt: 'a cat' }, callBackUrl: 'http://192.0.43.8/hook' },
    });
    expect(res.status).toBe(200);
    const id = res.body.data.taskId as string;
    await s.services.database.tx((w) =>
      w
        .updateTable('callbacks')
        .set({ url: `http://localhost:${new URL(r.url).port}/hook` })
        .where('task_id', '=', id)
        .execute(),
    );
    // The delivery worker made its attempts and gave up: only then is "nothing received" a finding.
    const t = await eventually(
      async () => {
        const now = await info(s, a.key, id);
        return now.callback.status !== 'pending' ? now : null;
      },
      15_000,
      'the callback to be settled',
    );
    expect(t.callback).toMatchObject({ status: 'failed', attempts: 2, lastStatusCode: null });
    expect(t.callback.lastError).toMatch(/localhost resolves to .*loopback/);
    expect(r.received).toHaveLength(0);
  });
});
