import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { buildServices, type Services } from '../../src/services.js';
import { eventually } from '../tasks/support.js';

describe.each(dialects())('keys, accounts and /user/balance on %s', (dialect) => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer(dialect, { USD_RUB_RATE: '92.5' });
  });
  afterAll(() => s.close());

  it('returns the balance with 4 decimals and RUB at the configured rate', async () => {
    const { id, key } = await s.account(12.34);
    const r = await s.call('GET', '/api/v1/user/balance', { key });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ code: 200, msg: 'success', data: { balance: '12.3400', currency: 'USD', balanceRub: 1141.45 } });
    expect(r.headers.get('content-type')).toBe('application/json; charset=utf-8');
    await s.services.database.tx((t) => s.services.ledger.charge(t, id, 1_405_000, 'bal-task', 'x'));
    const after = await s.call('GET', '/api/v1/user/balance', { key });
    expect(after.body.data).toEqual({ balance: '10.9350', currency: 'USD', balanceRub: 1011.49 });
  });

  it('generates gg_ keys with at least 128 random bits and stores only a hash', async () => {
    const a = await s.services.accounts.create('hash-check', 0);
    expect(a.apiKey).toMatch(/^gg_[A-Za-z0-9_-]{32}$/);
    const rows = await s.services.database.db.selectFrom('api_keys').selectAll().execute();
    expect(JSON.stringify(rows)).not.toContain(a.apiKey);
    expect(JSON.stringify(rows)).not.toContain(a.apiKey.slice(3));
    if (dialect === 'sqlite') {
      const file = s.db.url.slice('sqlite:'.length);
      for (const f of [file, `${file}-wal`]) {
        try {
          expect(readFileSync(f).includes(a.apiKey.slice(3))).toBe(false);
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
        }
      }
    }
    const other = await s.services.accounts.create('hash-check-2', 0);
    expect(other.apiKey).not.toBe(a.apiKey);
  });

  it('refuses a revoked key with 401 and a disabled account with 403', async () => {
    const { id, key } = await s.account(1);
    const second = await s.services.accounts.createKey(id, {});
    expect((await s.call('GET', '/api/v1/user/balance', { key: second.apiKey })).status).toBe(200);
    await s.services.accounts.revokeKey(second.key.id);
    const revoked = await s.call('GET', '/api/v1/user/balance', { key: second.apiKey });
    expect(revoked.status).toBe(401);
    expect(revoked.body).toMatchObject({ error: 'authentication_error', msg: 'this API key has been revoked' });
    expect((await s.call('GET', '/api/v1/user/balance', { key })).status).toBe(200);

    await s.services.accounts.setStatus(id, 'disabled');
    const disabled = await s.call('GET', '/api/v1/user/balance', { key });
    expect(disabled.status).toBe(403);
    expect(disabled.body).toMatchObject({ code: 403, error: 'permission_error', data: null });
    expect(disabled.body.msg).toContain('disabled');
    await s.services.accounts.setStatus(id, 'active');
    expect((await s.call('GET', '/api/v1/user/balance', { key })).status).toBe(200);
  });

  it('enforces key scopes with 403 naming the missing scope', async () => {
    const { id } = await s.account(1);
    const limited = await s.services.accounts.createKey(id, { scopes: ['tasks:read'], models: ['suno-v6'] });
    expect(limited.key.scopes).toEqual(['tasks:read']);
    expect(limited.key.models).toEqual(['suno-v6']);
    const r = await s.call('GET', '/api/v1/user/balance', { key: limited.apiKey });
    expect(r.status).toBe(403);
    expect(r.body.error).toBe('permission_error');
    expect(r.body.msg).toContain('balance:read');
    const allowed = await s.services.accounts.createKey(id, { scopes: ['balance:read'] });
    expect((await s.call('GET', '/api/v1/user/balance', { key: allowed.apiKey })).status).toBe(200);
    await expect(s.services.accounts.createKey(id, { scopes: ['root'] })).rejects.toThrow(/unknown scope "root"; allowed: tasks:write/);
  });

  it('records when a key was last used', async () => {
    const { id, key } = await s.account(1);
    const before = await s.services.accounts.listKeys(id);
    expect(before[0]!.lastUsedAt).toBeNull();
    await s.call('GET', '/api/v1/user/balance', { key });
    // Written after the answer, off the request's path.
    const after = await eventually(async () => (await s.services.accounts.listKeys(id))[0]!.lastUsedAt, 15_000, 'lastUsedAt to be written');
    expect(after).toEqual(expect.any(String));
  });
});

describe.each(dialects())('remembered keys (AUTH_CACHE_MS) on %s', (dialect) => {
  let s: TestServer;
  let other: Services;
  let now = Date.now();
  beforeAll(async () => {
    s = await startServer(dialect, { AUTH_CACHE_MS: '5000' }, undefined, { clock: { now: () => now } });
    // A second set of services on the same database plays another process (the CLI, another server).
    other = await buildServices(s.config);
  });
  afterAll(async () => {
    await other.close();
    await s.close();
  });

  it('applies a revocation made by another process once the cache time has passed', async () => {
    const { id } = await s.account(1);
    const extra = await s.services.accounts.createKey(id, {});
    expect((await s.call('GET', '/api/v1/user/balance', { key: extra.apiKey })).status).toBe(200);
    await other.accounts.revokeKey(extra.key.id);
    now += 4_000;
    expect((await s.call('GET', '/api/v1/user/balance', { key: extra.apiKey })).status).toBe(200);
    now += 1_001;
    const r = await s.call('GET', '/api/v1/user/balance', { key: extra.apiKey });
    expect(r.status).toBe(401);
    expect(r.body.msg).toBe('this API key has been revoked');
  });

  it('applies changes made in this process to the next request', async () => {
    const { id, key } = await s.account(1);
    expect((await s.call('GET', '/api/v1/user/balance', { key })).status).toBe(200);
    await s.services.accounts.setStatus(id, 'disabled');
    expect((await s.call('GET', '/api/v1/user/balance', { key })).status).toBe(403);
    await s.services.accounts.setStatus(id, 'active');
    expect((await s.call('GET', '/api/v1/user/balance', { key })).status).toBe(200);
    await s.services.accounts.setLimits(id, { read: 1 });
    await s.call('GET', '/api/v1/user/balance', { key });
    expect((await s.call('GET', '/api/v1/user/balance', { key })).status).toBe(429);
  });

  it('never remembers an unknown key, so a key made by another process works at once', async () => {
    const { id } = await s.account(1);
    const made = await other.accounts.createKey(id, {});
    expect((await s.call('GET', '/api/v1/user/balance', { key: made.apiKey })).status).toBe(200);
    const unknown = 'gg_' + 'A'.repeat(32);
    expect((await s.call('GET', '/api/v1/user/balance', { key: unknown })).status).toBe(401);
  });

  it('reads the balance fresh on every request', async () => {
    const { id, key } = await s.account(2);
    expect((await s.call('GET', '/api/v1/user/balance', { key })).body.data.balance).toBe('2.0000');
    await other.accounts.topup(id, 1_000_000, 'from elsewhere');
    expect((await s.call('GET', '/api/v1/user/balance', { key })).body.data.balance).toBe('3.0000');
  });
});
