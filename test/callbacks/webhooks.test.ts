import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { dialects } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { FAST, MovableClock, create, eventually, info } from '../tasks/support.js';
import { asBrowser, signedIn } from '../members/support.js';
import { startReceiver } from './receiver.js';

type Receiver = Awaited<ReturnType<typeof startReceiver>>;
const PASSWORD = 'correct horse battery';
const DAY = 24 * 3600_000;

describe.each(dialects())('account webhooks on %s', (dialect) => {
  let s: TestServer;
  let r: Receiver;
  const clock = new MovableClock();
  let account: { id: string; key: string };

  beforeAll(async () => {
    r = await startReceiver((path, count) => {
      if (path.startsWith('/flaky')) return count === 1 ? 500 : 200;
      if (path.startsWith('/down')) return 503;
      return 200;
    });
    s = await startServer(dialect, { ...FAST, ALLOW_PRIVATE_NETWORK: 'true', CALLBACK_RETRY_DELAYS_MS: '50,50', CALLBACK_TIMEOUT_MS: '2000' }, undefined, {
      clock,
    });
    s.services.engine.start();
    s.services.callbacks.start();
    account = await s.account(10);
  });
  afterAll(async () => {
    await s.close();
    await r.close();
  });

  /** Creates a task reporting to `path` and waits until its callback is no longer pending. */
  async function run(path: string, key = account.key) {
    const id = await create(s, key, 'nano-banana-2', { prompt: 'a cat' }, { callBackUrl: `${r.url}${path}` });
    await eventually(async () => {
      const t = await info(s, key, id);
      return t.callback && t.callback.status !== 'pending' ? t : null;
    }, 20_000);
    return id;
  }
  const signatures = (h: Record<string, unknown>) => String(h['webhook-signature']).split(' ');
  const sign = (secret: string, h: Record<string, unknown>, body: string) =>
    new Webhook(secret).sign(String(h['webhook-id']), new Date(Number(h['webhook-timestamp']) * 1000), body);

  it('logs every attempt of a callback, failures and retries included', async () => {
    const id = await run(`/flaky/${Math.random()}`);
    const log = await s.call('GET', `/api/v1/jobs/callbacks?taskId=${id}`, { key: account.key });
    expect(log.status, JSON.stringify(log.body)).toBe(200);
    expect(log.body.data.callback).toMatchObject({ status: 'delivered', attempts: 2, lastStatusCode: 200 });
    expect(log.body.data.attempts).toMatchObject([
      { kind: 'delivery', ok: false, statusCode: 500, error: 'receiver answered HTTP 500', webhookId: `msg_${id}` },
      { kind: 'retry', ok: true, statusCode: 200, error: null, webhookId: `msg_${id}` },
    ]);
    for (const a of log.body.data.attempts) expect(a.durationMs).toBeGreaterThanOrEqual(0);
    expect(log.body.data.attempts[1].at).toBeGreaterThanOrEqual(log.body.data.attempts[0].at + 50);
  });

  it('logs a callback given up after its retries; redeliver makes one more attempt, logged, once per 10 s', async () => {
    const path = `/down/${Math.random()}`;
    const id = await run(path);
    const before = await s.call('GET', `/api/v1/jobs/callbacks?taskId=${id}`, { key: account.key });
    expect(before.body.data.callback.status).toBe('failed');
    expect(before.body.data.attempts.map((a: any) => [a.kind, a.statusCode])).toEqual([
      ['delivery', 503],
      ['retry', 503],
      ['retry', 503],
    ]);
    const again = await s.call('POST', '/api/v1/jobs/callbacks/redeliver', { key: account.key, body: { taskId: id } });
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(again.body.data).toMatchObject({
      repeated: false,
      attempt: { kind: 'redeliver', ok: false, statusCode: 503 },
      callback: { status: 'failed', attempts: 4 },
    });
    const repeat = await s.call('POST', '/api/v1/jobs/callbacks/redeliver', { key: account.key, body: { taskId: id } });
    expect(repeat.body.data).toMatchObject({ repeated: true, attempt: { id: again.body.data.attempt.id } });
    expect(r.at(path)).toHaveLength(4);
    clock.advance(11_000);
    const later = await s.call('POST', '/api/v1/jobs/callbacks/redeliver', { key: account.key, body: { taskId: id } });
    expect(later.body.data).toMatchObject({ repeated: false, attempt: { kind: 'redeliver', statusCode: 503 } });
    const log = await s.call('GET', `/api/v1/jobs/callbacks?taskId=${id}`, { key: account.key });
    expect(log.body.data.attempts.map((a: any) => a.kind)).toEqual(['delivery', 'retry', 'retry', 'redeliver', 'redeliver']);
    expect(r.at(path)).toHaveLength(5);
    expect(r.at(path)[4]!.headers['webhook-id']).toBe(`msg_${id}`);
  });

  it('redeliver of a delivered callback sends it again, signed, and marks it delivered', async () => {
    const path = `/ok/${Math.random()}`;
    const id = await run(path);
    const res = await s.call('POST', '/api/v1/jobs/callbacks/redeliver', { key: account.key, body: { taskId: id } });
    expect(res.body.data).toMatchObject({
      repeated: false,
      attempt: { kind: 'redeliver', ok: true, statusCode: 200 },
      callback: { status: 'delivered', attempts: 2 },
    });
    const [, second] = r.at(path);
    const secret = await s.services.accounts.webhookSecret(account.id);
    expect(JSON.parse(second!.body)).toMatchObject({ code: 200, taskId: id });
    expect(() => new Webhook(secret).verify(second!.body, second!.headers as Record<string, string>)).not.toThrow();
  });

  it('refuses foreign tasks (404), tasks without callBackUrl and unfinished ones (409)', async () => {
    const id = await run(`/ok/${Math.random()}`);
    const other = await s.account(5, 'other');
    expect((await s.call('GET', `/api/v1/jobs/callbacks?taskId=${id}`, { key: other.key })).status).toBe(404);
    const foreign = await s.call('POST', '/api/v1/jobs/callbacks/redeliver', { key: other.key, body: { taskId: id } });
    expect(foreign.status).toBe(404);
    expect(foreign.body.msg).toContain(id);
    expect((await s.call('GET', '/api/v1/jobs/callbacks', { key: account.key })).status).toBe(422);
    const plain = await create(s, account.key, 'nano-banana-2', { prompt: 'no callback' });
    const none = await s.call('GET', `/api/v1/jobs/callbacks?taskId=${plain}`, { key: account.key });
    expect(none.body.data).toEqual({ taskId: plain, callback: null, attempts: [] });
    const refused = await s.call('POST', '/api/v1/jobs/callbacks/redeliver', { key: account.key, body: { taskId: plain } });
    expect(refused.status).toBe(409);
    expect(refused.body.msg).toContain('callBackUrl');
    await s.services.engine.stop();
    try {
      const waiting = await create(s, account.key, 'nano-banana-2', { prompt: 'still waiting' }, { callBackUrl: `${r.url}/ok/waiting` });
      const early = await s.call('POST', '/api/v1/jobs/callbacks/redeliver', { key: account.key, body: { taskId: waiting } });
      expect(early.status).toBe(409);
      expect(early.body.msg).toContain('not finished');
    } finally {
      s.services.engine.start();
    }
    const reader = await s.services.accounts.createKey(account.id, { scopes: ['tasks:read'] });
    expect((await s.call('POST', '/api/v1/jobs/callbacks/redeliver', { key: reader.apiKey, body: { taskId: id } })).status).toBe(403);
  });

  it('sends a signed test delivery and logs it', async () => {
    const path = `/test/${Math.random()}`;
    const res = await s.call('POST', '/api/v1/account/webhooks/test', { key: account.key, body: { url: `${r.url}${path}` } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data).toMatchObject({ kind: 'test', ok: true, statusCode: 200, body: { type: 'webhook.test', accountId: account.id } });
    const [got] = r.at(path);
    const secret = await s.services.accounts.webhookSecret(account.id);
    expect(new Webhook(secret).verify(got!.body, got!.headers as Record<string, string>)).toEqual(res.body.data.body);
    const bad = await s.call('POST', '/api/v1/account/webhooks/test', { key: account.key, body: { url: 'ftp://x' } });
    expect(bad.status).toBe(400);
    expect(bad.body.msg).toContain('url');
  });

  it('rotation: both secrets sign for 24 hours, then only the new one', async () => {
    const a = await s.account(5, 'rotating');
    const payer = await s.services.accounts.createKey(a.id, { scopes: ['billing', 'tasks:write'] });
    const shown = await s.call('GET', '/api/v1/account/webhook-secret', { key: payer.apiKey });
    expect(shown.status, JSON.stringify(shown.body)).toBe(200);
    const old = shown.body.data.secret as string;
    expect(shown.body.data.previous).toBeNull();
    expect((await s.call('GET', '/api/v1/account/webhook-secret', { key: a.key.replace(/.$/, (c) => (c === 'a' ? 'b' : 'a')) })).status).toBe(401);
    const at = clock.now();
    const rotated = await s.call('POST', '/api/v1/account/webhook-secret/rotate', { key: payer.apiKey });
    expect(rotated.status).toBe(200);
    const fresh = rotated.body.data.secret as string;
    expect(fresh).not.toBe(old);
    expect(rotated.body.data.previous.secret).toBe(old);
    expect(Date.parse(rotated.body.data.previous.validUntil) - at).toBeGreaterThanOrEqual(DAY);
    expect(Date.parse(rotated.body.data.previous.validUntil) - clock.now()).toBeLessThanOrEqual(DAY);
    expect((await s.call('GET', '/api/v1/account/webhook-secret', { key: payer.apiKey })).body.data).toEqual(rotated.body.data);

    const during = `/rot/during/${Math.random()}`;
    expect((await s.call('POST', '/api/v1/account/webhooks/test', { key: payer.apiKey, body: { url: `${r.url}${during}` } })).body.data.ok).toBe(true);
    const [d] = r.at(during);
    const h = d!.headers as Record<string, string>;
    expect(signatures(h)).toEqual([sign(fresh, h, d!.body), sign(old, h, d!.body)]);
    expect(() => new Webhook(fresh).verify(d!.body, h)).not.toThrow();
    expect(() => new Webhook(old).verify(d!.body, h)).not.toThrow();
    const subject = JSON.parse(d!.body).id as string;
    expect(h['x-webhook-signature']).toBe(createHmac('sha256', fresh).update(`${subject}.${h['x-webhook-timestamp']}`).digest('base64'));
    expect(h['x-webhook-signature-previous']).toBe(createHmac('sha256', old).update(`${subject}.${h['x-webhook-timestamp']}`).digest('base64'));

    clock.advance(DAY + 1000);
    try {
      expect((await s.call('GET', '/api/v1/account/webhook-secret', { key: payer.apiKey })).body.data).toEqual({ secret: fresh, previous: null });
      const after = `/rot/after/${Math.random()}`;
      await s.call('POST', '/api/v1/account/webhooks/test', { key: payer.apiKey, body: { url: `${r.url}${after}` } });
      const [x] = r.at(after);
      const hx = x!.headers as Record<string, string>;
      expect(signatures(hx)).toEqual([sign(fresh, hx, x!.body)]);
      expect(hx['x-webhook-signature-previous']).toBeUndefined();
    } finally {
      clock.advance(-(DAY + 1000));
    }
  });

  it('task callbacks carry both signatures during the overlap', async () => {
    const old = await s.services.accounts.webhookSecret(account.id);
    const { secret: fresh } = await s.services.accounts.rotateWebhookSecret(account.id);
    const path = `/ok/rotated/${Math.random()}`;
    await run(path);
    const [got] = r.at(path);
    const h = got!.headers as Record<string, string>;
    expect(() => new Webhook(fresh).verify(got!.body, h)).not.toThrow();
    expect(() => new Webhook(old).verify(got!.body, h)).not.toThrow();
    expect(signatures(h)).toHaveLength(2);
  });

  it('reveal and rotate need the scope billing or an owner; a member is refused', async () => {
    const a = await s.account(5, 'people');
    const writer = await s.services.accounts.createKey(a.id, { scopes: ['tasks:write', 'tasks:read'] });
    const refused = await s.call('GET', '/api/v1/account/webhook-secret', { key: writer.apiKey });
    expect(refused.status).toBe(403);
    expect(refused.body.msg).toContain('billing');
    expect((await s.call('POST', '/api/v1/account/webhook-secret/rotate', { key: writer.apiKey })).status).toBe(403);
    await s.services.members.create(a.id, 'boss@people.example', 'owner', PASSWORD);
    await s.services.members.create(a.id, 'staff@people.example', 'member', PASSWORD);
    const boss = asBrowser(s, await signedIn(await s.call('POST', '/api/v1/auth/signin', { body: { email: 'boss@people.example', password: PASSWORD } })));
    const staff = asBrowser(s, await signedIn(await s.call('POST', '/api/v1/auth/signin', { body: { email: 'staff@people.example', password: PASSWORD } })));
    const secret = await s.services.accounts.webhookSecret(a.id);
    expect((await boss('GET', '/api/v1/account/webhook-secret')).body.data.secret).toBe(secret);
    const denied = await staff('GET', '/api/v1/account/webhook-secret');
    expect(denied.status).toBe(403);
    expect(denied.body.msg).toContain('owner');
    expect((await staff('POST', '/api/v1/account/webhook-secret/rotate')).status).toBe(403);
    expect((await boss('POST', '/api/v1/account/webhook-secret/rotate', { csrf: false })).status).toBe(403);
    const rotated = await boss('POST', '/api/v1/account/webhook-secret/rotate');
    expect(rotated.status).toBe(200);
    expect(rotated.body.data.previous.secret).toBe(secret);
  });
});
