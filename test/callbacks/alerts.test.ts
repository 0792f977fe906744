import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { dialects } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { buildServices, type Services } from '../../src/services.js';
import { buildApp } from '../../src/http/app.js';
import { MICROS_PER_USD, formatUsd } from '../../src/billing/index.js';
import { FAST, eventually, expectLedgerInvariant } from '../tasks/support.js';
import { asBrowser, signedIn, startSmtp, waitFor } from '../members/support.js';
import { startReceiver } from './receiver.js';

type Receiver = Awaited<ReturnType<typeof startReceiver>>;
type Smtp = Awaited<ReturnType<typeof startSmtp>>;
const PASSWORD = 'correct horse battery';
const MODEL = 'nano-banana-2';

describe.each(dialects())('low-balance alerts on %s', (dialect) => {
  let s: TestServer;
  let r: Receiver;
  let smtp: Smtp;
  let price: number;

  beforeAll(async () => {
    r = await startReceiver(() => 200);
    smtp = await startSmtp();
    s = await startServer(dialect, {
      ...FAST,
      ALLOW_PRIVATE_NETWORK: 'true',
      SMTP_URL: smtp.url,
      CALLBACK_RETRY_DELAYS_MS: '50,50',
      CALLBACK_TIMEOUT_MS: '2000',
    });
    s.services.callbacks.start();
    const probe = await s.call('GET', `/v1/pricing/calculate?model=${MODEL}`);
    expect(probe.status, JSON.stringify(probe.body)).toBe(200);
    const a = await s.account(10);
    const before = await s.services.accounts.balanceMicros(a.id);
    await createTask(s, a.key);
    price = before - (await s.services.accounts.balanceMicros(a.id));
    expect(price).toBeGreaterThan(0);
  });
  afterAll(async () => {
    await s.close();
    await r.close();
    await smtp.close();
  });

  const createTask = async (server: { call: TestServer['call'] }, key: string) => {
    const res = await server.call('POST', '/api/v1/jobs/createTask', { key, body: { model: MODEL, input: { prompt: 'a cat' } } });
    return res.status;
  };
  const alertsTo = (path: string) => r.at(path).map((x) => ({ ...x, json: JSON.parse(x.body) }));
  const events = (accountId: string) => s.services.database.db.selectFrom('account_events').selectAll().where('account_id', '=', accountId).execute();
  const usd = (micros: number) => formatUsd(micros, 6);

  /** An account with `creates` charges of room, an owner with an email, and its alert set halfway down (to /alert/<id>). */
  async function alerted(creates: number, name: string) {
    const a = await s.account((creates * price) / MICROS_PER_USD, name);
    const email = `${name}@example.com`;
    await s.services.members.create(a.id, email, 'owner', PASSWORD);
    const level = Math.floor(creates / 2) * price + Math.floor(price / 2);
    const put = await s.call('PUT', '/api/v1/account/alert', { key: a.key, body: { level: usd(level), url: `${r.url}/alert/${a.id}`, email: true } });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body.data).toEqual({ level: formatUsd(level, 4), url: `${r.url}/alert/${a.id}`, email: true, armed: true });
    return { ...a, email, level };
  }

  it('fires one signed webhook and one email when 30 concurrent creates cross the level', async () => {
    const a = await alerted(30, 'crowd');
    const statuses = await Promise.all(Array.from({ length: 30 }, () => createTask(s, a.key)));
    expect(statuses.every((x) => x === 200)).toBe(true);
    expect(await s.services.accounts.balanceMicros(a.id)).toBe(0);
    const got = await waitFor(() => (alertsTo(`/alert/${a.id}`).length > 0 ? alertsTo(`/alert/${a.id}`) : undefined));
    const mail = await waitFor(() => smtp.mails.find((m) => m.to === a.email));
    await new Promise((done) => setTimeout(done, 300)); // room for a wrong second alert to arrive
    expect(alertsTo(`/alert/${a.id}`)).toHaveLength(1);
    expect(smtp.mails.filter((m) => m.to === a.email)).toHaveLength(1);
    const [hook] = got;
    expect(hook!.json).toMatchObject({ type: 'balance.low', accountId: a.id, level: formatUsd(a.level, 4), currency: 'USD' });
    // The balance it reports is the first one below the level: the crossing charge's.
    const crossed = Math.floor((30 * price - a.level) / price) + 1;
    expect(hook!.json.balance).toBe(formatUsd(30 * price - crossed * price, 4));
    const secret = await s.services.accounts.webhookSecret(a.id);
    expect(new Webhook(secret).verify(hook!.body, hook!.headers as Record<string, string>)).toEqual(hook!.json);
    expect(hook!.headers['webhook-id']).toBe(`msg_${hook!.json.id}`);
    expect(() => new Webhook(Buffer.from('another secret').toString('base64')).verify(hook!.body, hook!.headers as Record<string, string>)).toThrow();
    expect(mail.text).toContain(`below the alert level of ${formatUsd(a.level, 4)} USD`);
    const rows = await events(a.id);
    expect(rows.map((e) => [e.channel, e.status]).sort()).toEqual([
      ['email', 'delivered'],
      ['webhook', 'delivered'],
    ]);
    const log = await s.services.database.db.selectFrom('webhook_attempts').selectAll().where('account_id', '=', a.id).execute();
    expect(log).toMatchObject([{ kind: 'event', event_id: hook!.json.id, status_code: 200 }]);
    const shown = await s.call('GET', '/api/v1/account/alert', { key: a.key });
    expect(shown.body.data.armed).toBe(false);
    await expectLedgerInvariant(s.services.database);
  });

  it('sends no second alert until a top-up re-arms it, then one more', async () => {
    const a = await alerted(4, 'rearm');
    for (let i = 0; i < 3; i++) expect(await createTask(s, a.key)).toBe(200); // crosses once, then stays below
    await waitFor(() => (alertsTo(`/alert/${a.id}`).length > 0 ? true : undefined));
    // A top-up that leaves the balance still below the level does not re-arm.
    await s.services.accounts.topup(a.id, 1, 'a little');
    expect((await s.call('GET', '/api/v1/account/alert', { key: a.key })).body.data.armed).toBe(false);
    await s.services.accounts.topup(a.id, a.level + Math.floor(price / 2) - (await s.services.accounts.balanceMicros(a.id)), 'back over the level');
    expect((await s.call('GET', '/api/v1/account/alert', { key: a.key })).body.data.armed).toBe(true);
    await new Promise((done) => setTimeout(done, 200));
    expect(alertsTo(`/alert/${a.id}`)).toHaveLength(1);
    expect(await createTask(s, a.key)).toBe(200); // below again: the second crossing
    await waitFor(() => (alertsTo(`/alert/${a.id}`).length === 2 ? true : undefined));
    await waitFor(() => (smtp.mails.filter((m) => m.to === a.email).length === 2 ? true : undefined));
    expect((await events(a.id)).filter((e) => e.channel === 'webhook')).toHaveLength(2);
  });

  it('an operator debit crosses the level like a charge; a refund re-arms', async () => {
    const a = await alerted(4, 'debit');
    await s.services.accounts.adjust(a.id, -(4 * price - a.level + 1), 'operator debit');
    await waitFor(() => (alertsTo(`/alert/${a.id}`).length === 1 ? true : undefined));
    await s.services.accounts.adjust(a.id, 1, 'back to the level');
    expect((await s.call('GET', '/api/v1/account/alert', { key: a.key })).body.data.armed).toBe(true);
  });

  it('fires once across two processes sharing the database', async () => {
    const a = await alerted(30, 'twins');
    const other: Services = await buildServices(s.config);
    const app = buildApp(other);
    await app.listen({ port: 0, host: '127.0.0.1' });
    const address = app.server.address();
    const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    other.callbacks.start();
    try {
      const second = {
        call: async (method: string, path: string, opts: { key?: string; body?: unknown } = {}) => {
          const res = await fetch(url + path, {
            method,
            headers: { authorization: `Bearer ${opts.key}`, 'content-type': 'application/json' },
            body: JSON.stringify(opts.body),
          });
          return { status: res.status, body: await res.json(), headers: res.headers };
        },
      };
      const statuses = await Promise.all(Array.from({ length: 30 }, (_, i) => createTask(i % 2 ? s : second, a.key)));
      expect(statuses.every((x) => x === 200)).toBe(true);
      await waitFor(() => (alertsTo(`/alert/${a.id}`).length > 0 ? true : undefined));
      await waitFor(() => smtp.mails.find((m) => m.to === a.email));
      await new Promise((done) => setTimeout(done, 400));
      expect(alertsTo(`/alert/${a.id}`)).toHaveLength(1);
      expect(smtp.mails.filter((m) => m.to === a.email)).toHaveLength(1);
      expect(await events(a.id)).toHaveLength(2);
    } finally {
      await app.close();
      await other.close();
    }
  });

  it('who may read and change the alert; refusals name the field', async () => {
    const a = await s.account(5, 'rules');
    const reader = await s.services.accounts.createKey(a.id, { scopes: ['balance:read'] });
    const payer = await s.services.accounts.createKey(a.id, { scopes: ['billing'] });
    expect((await s.call('GET', '/api/v1/account/alert', { key: reader.apiKey })).body.data).toEqual({ level: null, url: null, email: false, armed: false });
    const refused = await s.call('PUT', '/api/v1/account/alert', { key: reader.apiKey, body: { level: '1' } });
    expect(refused.status).toBe(403);
    expect(refused.body.msg).toContain('billing');
    const bad = await s.call('PUT', '/api/v1/account/alert', { key: payer.apiKey, body: { level: '-1' } });
    expect(bad.status).toBe(400);
    expect(bad.body.msg).toContain('level');
    const badUrl = await s.call('PUT', '/api/v1/account/alert', { key: payer.apiKey, body: { url: 'ftp://example.com/x' } });
    expect(badUrl.status).toBe(400);
    expect(badUrl.body.msg).toContain('url');
    // Above the balance: set, but not armed until the balance reaches it.
    const high = await s.call('PUT', '/api/v1/account/alert', { key: payer.apiKey, body: { level: 6 } });
    expect(high.body.data).toMatchObject({ level: '6.0000', armed: false });
    const off = await s.call('PUT', '/api/v1/account/alert', { key: payer.apiKey, body: { level: null } });
    expect(off.body.data).toMatchObject({ level: null, armed: false });

    await s.services.members.create(a.id, 'owner@rules.example', 'owner', PASSWORD);
    await s.services.members.create(a.id, 'member@rules.example', 'member', PASSWORD);
    const owner = asBrowser(s, await signedIn(await s.call('POST', '/api/v1/auth/signin', { body: { email: 'owner@rules.example', password: PASSWORD } })));
    const member = asBrowser(s, await signedIn(await s.call('POST', '/api/v1/auth/signin', { body: { email: 'member@rules.example', password: PASSWORD } })));
    expect((await owner('PUT', '/api/v1/account/alert', { body: { level: '2', email: true } })).body.data).toMatchObject({
      level: '2.0000',
      email: true,
      armed: true,
    });
    const denied = await member('PUT', '/api/v1/account/alert', { body: { level: '3' } });
    expect(denied.status).toBe(403);
    expect(denied.body.msg).toContain('owner');
    expect((await member('GET', '/api/v1/account/alert')).body.data.level).toBe('2.0000');
    expect((await owner('PUT', '/api/v1/account/alert', { body: { level: '3' }, csrf: false })).status).toBe(403);
  });

  it('the admin API sets and shows the alert', async () => {
    const token = 'admin-token-for-alerts-test';
    const admin = await startServer(dialect, { ADMIN_TOKEN: token, ALLOW_PRIVATE_NETWORK: 'true' });
    try {
      const a = await admin.account(5, 'admin');
      const headers = { authorization: `Bearer ${token}` };
      const set = await admin.call('POST', `/admin/v1/accounts/${a.id}/alert`, { headers, body: { level: '4.5', url: 'https://example.com/hook' } });
      expect(set.status, JSON.stringify(set.body)).toBe(200);
      expect(set.body.data).toEqual({ level: '4.5000', url: 'https://example.com/hook', email: false, armed: true });
      expect((await admin.call('GET', `/admin/v1/accounts/${a.id}/alert`, { headers })).body.data.level).toBe('4.5000');
      expect((await admin.call('GET', `/admin/v1/accounts/nope/alert`, { headers })).status).toBe(404);
      // This server has no SMTP: an email alert is recorded as failed, saying why, and nothing else goes out.
      admin.services.callbacks.start();
      await admin.call('POST', `/admin/v1/accounts/${a.id}/alert`, { headers, body: { url: null, email: true } });
      await admin.services.accounts.adjust(a.id, -1_000_000, 'below 4.5');
      const rows = await eventually(async () => {
        const rows = await admin.services.database.db.selectFrom('account_events').selectAll().where('account_id', '=', a.id).execute();
        return rows.length === 1 && rows[0]!.status !== 'pending' ? rows : null;
      });
      expect(rows![0]).toMatchObject({ channel: 'email', status: 'failed', attempts: 1, last_error: 'SMTP_URL is not set: no email can be sent' });
    } finally {
      await admin.close();
    }
  });

  it('keeps delivering after a crash: a leased event is taken over when its lease runs out', async () => {
    const a = await alerted(2, 'crash');
    await s.services.callbacks.stop();
    try {
      expect(await createTask(s, a.key)).toBe(200);
      expect(await createTask(s, a.key)).toBe(200);
      const [row] = (await events(a.id)).filter((e) => e.channel === 'webhook');
      // A worker that claimed it and died: its lease ran out a moment ago.
      await s.services.database.tx((trx) =>
        trx
          .updateTable('account_events')
          .set({ locked_by: 'ev_dead', locked_until: Date.now() - 1 })
          .where('id', '=', row!.id)
          .execute(),
      );
    } finally {
      s.services.callbacks.start();
    }
    await eventually(async () => (alertsTo(`/alert/${a.id}`).length === 1 ? true : null), 10_000);
  });
});
