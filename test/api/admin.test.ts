import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';

const ADMIN = 'admin-token-for-tests-0123456789';

describe.each(dialects())('admin API on %s', (dialect) => {
  let s: TestServer;
  const admin = (method: string, path: string, body?: unknown) => s.call(method, `/admin/v1${path}`, { body, headers: { authorization: `Bearer ${ADMIN}` } });
  beforeAll(async () => {
    s = await startServer(dialect, { ADMIN_TOKEN: ADMIN });
  });
  afterAll(() => s.close());

  it('refuses a missing or wrong admin token with 401', async () => {
    expect((await s.call('GET', '/admin/v1/accounts')).status).toBe(401);
    const wrong = await s.call('GET', '/admin/v1/accounts', { headers: { authorization: 'Bearer nope-nope-nope-nope' } });
    expect(wrong.status).toBe(401);
    expect(wrong.body.error).toBe('authentication_error');
  });

  it('creates an account with a key, tops up, disables, enables and shows the ledger', async () => {
    const created = await admin('POST', '/accounts', { name: 'acme', balance: '5.25' });
    expect(created.status).toBe(200);
    const { account, apiKey } = created.body.data;
    expect(account).toMatchObject({ name: 'acme', status: 'active', balance: '5.2500', balanceMicros: 5_250_000 });
    expect(account.webhookSecret).toMatch(/^whsec_/);
    expect((await admin('GET', `/accounts/${account.id}`)).body.data.webhookSecret).toBe(account.webhookSecret);
    expect(JSON.stringify((await admin('GET', '/accounts')).body.data)).not.toContain(account.webhookSecret);
    expect(apiKey).toMatch(/^gg_/);
    expect((await s.call('GET', '/api/v1/user/balance', { key: apiKey })).body.data.balance).toBe('5.2500');

    const topped = await admin('POST', `/accounts/${account.id}/topup`, { amount: 1.75, note: 'invoice 7' });
    expect(topped.body.data.balance).toBe('7.0000');
    expect((await admin('POST', `/accounts/${account.id}/disable`)).body.data.status).toBe('disabled');
    expect((await s.call('GET', '/api/v1/user/balance', { key: apiKey })).status).toBe(403);
    expect((await admin('POST', `/accounts/${account.id}/enable`)).body.data.status).toBe('active');
    expect((await admin('GET', `/accounts/${account.id}`)).body.data.balance).toBe('7.0000');
    expect((await admin('GET', '/accounts')).body.data.map((a: { id: string }) => a.id)).toContain(account.id);

    const ledger = await admin('GET', `/accounts/${account.id}/ledger`);
    expect(ledger.body.data.map((e: { kind: string; amount: string; reason: string }) => [e.kind, e.amount, e.reason])).toEqual([
      ['topup', '5.250000', 'opening balance'],
      ['topup', '1.750000', 'invoice 7'],
    ]);
    const csv = await fetch(`${s.url}/admin/v1/accounts/${account.id}/ledger?format=csv`, { headers: { authorization: `Bearer ${ADMIN}` } });
    expect(csv.headers.get('content-type')).toContain('text/csv');
    const lines = (await csv.text()).trim().split('\n');
    expect(lines[0]).toBe('id,created_at,kind,amount_usd,balance_after_usd,task_id,reason');
    expect(lines[2]).toMatch(/,topup,1\.750000,7\.000000,,invoice 7$/);
  });

  it('sets and clears per-account rate limits', async () => {
    const { id } = await s.account(1);
    const set = await admin('POST', `/accounts/${id}/limits`, { write: 50, read: 500 });
    expect(set.body.data.limits).toEqual({ write: 50, read: 500 });
    const cleared = await admin('POST', `/accounts/${id}/limits`, { write: null });
    expect(cleared.body.data.limits).toEqual({ write: null, read: 500 });
    const bad = await admin('POST', `/accounts/${id}/limits`, { read: 1.5 });
    expect(bad.status).toBe(400);
    expect(bad.body.msg).toMatch(/^read: .*\(got 1\.5\)$/);
  });

  it('creates, lists and revokes keys', async () => {
    const { id } = await s.account(1);
    const made = await admin('POST', `/accounts/${id}/keys`, { scopes: ['tasks:read', 'balance:read'], models: ['suno-v6'] });
    expect(made.body.data.key).toMatchObject({ scopes: ['tasks:read', 'balance:read'], models: ['suno-v6'], revokedAt: null });
    const keys = (await admin('GET', `/accounts/${id}/keys`)).body.data;
    expect(keys).toHaveLength(2);
    expect(JSON.stringify(keys)).not.toContain(made.body.data.apiKey);
    const revoked = await admin('POST', `/keys/${made.body.data.key.id}/revoke`);
    expect(revoked.body.data.revokedAt).not.toBeNull();
    expect((await s.call('GET', '/api/v1/user/balance', { key: made.body.data.apiKey })).status).toBe(401);
  });

  it('refuses bad admin input with a precise message and writes nothing', async () => {
    const before = (await admin('GET', '/accounts')).body.data.length;
    const bad = await admin('POST', '/accounts', { name: 'x', balance: '-3' });
    expect(bad.status).toBe(400);
    expect(bad.body.msg).toMatch(/^balance: must be a USD amount.*\(got "-3"\)$/);
    const missing = await admin('POST', '/accounts', {});
    expect(missing.status).toBe(422);
    expect(missing.body.msg).toBe('name is required');
    const extra = await admin('POST', '/accounts', { name: 'y', colour: 'red' });
    expect(extra.status).toBe(400);
    expect(extra.body.msg).toContain('colour');
    const scope = await admin('POST', `/accounts/${(await s.account(0)).id}/keys`, { scopes: ['everything'] });
    expect(scope.status).toBe(400);
    expect(scope.body.msg).toContain('allowed: tasks:write, tasks:read, files:write, balance:read');
    const unknown = await admin('POST', '/accounts/acc_nope/topup', { amount: 1 });
    expect(unknown.status).toBe(404);
    expect((await admin('GET', '/accounts')).body.data.length).toBe(before + 1);
  });
});

describe('admin API without ADMIN_TOKEN', () => {
  it('is off: every admin path answers 404', async () => {
    const s = await startServer('sqlite');
    try {
      const r = await s.call('GET', '/admin/v1/accounts', { headers: { authorization: 'Bearer whatever-whatever' } });
      expect(r.status).toBe(404);
      expect(r.body.error).toBe('not_found');
    } finally {
      await s.close();
    }
  });
});
