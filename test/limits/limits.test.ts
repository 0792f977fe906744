import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';
import { requireKey } from '../../src/http/auth.js';

const LIMITS = { RATE_LIMIT_WINDOW_SECONDS: '2', RATE_LIMIT_READ: '5', RATE_LIMIT_WRITE: '3', RATE_LIMIT_PUBLIC: '4' };

describe('rate limits (memory)', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer('sqlite', LIMITS, (app, services) => {
      // Stands in for createTask/upload until they exist: the same preHandler, the write group.
      app.post('/api/v1/test-write', { preHandler: requireKey(services, 'tasks:write') }, async () => ({ code: 200, msg: 'success', data: null }));
    });
  });
  afterAll(() => s.close());

  it('count reads per key, say the limit and the wait, and pass again after Retry-After', async () => {
    const { key } = await s.account(1);
    for (let i = 0; i < 5; i++) {
      const r = await s.call('GET', '/api/v1/user/balance', { key });
      expect(r.status).toBe(200);
      expect(r.headers.get('ratelimit-limit')).toBe('5');
      expect(r.headers.get('ratelimit-remaining')).toBe(String(4 - i));
      expect(Number(r.headers.get('ratelimit-reset'))).toBeGreaterThanOrEqual(0);
    }
    const refused = await s.call('GET', '/api/v1/user/balance', { key });
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ code: 429, error: 'rate_limit_error', data: null });
    const wait = Number(refused.headers.get('retry-after'));
    expect(wait).toBeGreaterThanOrEqual(1);
    expect(wait).toBeLessThanOrEqual(2);
    expect(refused.body.msg).toBe(`rate limit exceeded: at most 5 recordInfo, list and balance requests per API key every 2 s; retry in ${wait} s`);

    const other = await s.account(1);
    expect((await s.call('GET', '/api/v1/user/balance', { key: other.key })).status).toBe(200);

    // The one fixed wait left: the answer's own promise ("retry in N s") is what is under test.
    await sleep(wait * 1000 + 100);
    expect((await s.call('GET', '/api/v1/user/balance', { key })).status).toBe(200);
  });

  it('give createTask and upload their own budget', async () => {
    const { key } = await s.account(1);
    for (let i = 0; i < 3; i++) expect((await s.call('POST', '/api/v1/test-write', { key, body: {} })).status).toBe(200);
    const refused = await s.call('POST', '/api/v1/test-write', { key, body: {} });
    expect(refused.status).toBe(429);
    expect(refused.body.msg).toContain('at most 3 createTask and upload requests per API key');
    expect((await s.call('GET', '/api/v1/user/balance', { key })).status).toBe(200);
  });

  it('do not count refused keys against anybody', async () => {
    for (let i = 0; i < 8; i++) expect((await s.call('GET', '/api/v1/user/balance', { key: 'gg_not_a_key' })).status).toBe(401);
  });

  it('follow the per-account override, and the default again once it is cleared', async () => {
    const { id, key } = await s.account(1);
    const view = await s.services.accounts.setLimits(id, { read: 2 });
    expect(view.limits).toEqual({ write: null, read: 2 });
    expect((await s.call('GET', '/api/v1/user/balance', { key })).headers.get('ratelimit-limit')).toBe('2');
    await s.call('GET', '/api/v1/user/balance', { key });
    expect((await s.call('GET', '/api/v1/user/balance', { key })).status).toBe(429);
    await s.services.accounts.setLimits(id, { read: null });
    const back = await s.call('GET', '/api/v1/user/balance', { key });
    expect(back.status).toBe(200);
    expect(back.headers.get('ratelimit-limit')).toBe('5');
    await expect(s.services.accounts.setLimits(id, { write: 0 })).rejects.toThrow(
      'write must be a whole number of requests from 1 to 1000000000, or null for the default (got 0)',
    );
  });

  it('limit public endpoints per client address, in each endpoint family’s own body shape', async () => {
    const p = await startServer('sqlite', LIMITS); // a limiter of its own: a fresh window for this address
    try {
      for (let i = 0; i < 4; i++) expect((await p.call('GET', '/api/v1/models')).status).toBe(200);
      const models = await p.call('GET', '/api/v1/models');
      expect(models.status).toBe(429);
      expect(models.body).toMatchObject({ code: 429, error: 'rate_limit_error' });
      expect(models.body.msg).toContain('requests to public endpoints per client address');
      const calc = await p.call('GET', '/v1/pricing/calculate?model=suno-v6');
      expect(calc.status).toBe(429);
      expect(calc.headers.get('retry-after')).toMatch(/^[12]$/);
      expect(calc.body).toMatchObject({ ok: false, error: { code: 'rate_limited', field: null } });
    } finally {
      await p.close();
    }
  });
});

describe('rate limits under ERROR_STYLE=reference', () => {
  it('answer 429 rate_limited', async () => {
    const s = await startServer('sqlite', { ...LIMITS, ERROR_STYLE: 'reference', RATE_LIMIT_READ: '1' });
    try {
      const { key } = await s.account(1);
      await s.call('GET', '/api/v1/user/balance', { key });
      const r = await s.call('GET', '/api/v1/user/balance', { key });
      expect(r.status).toBe(429);
      expect(r.body.error).toBe('rate_limited');
    } finally {
      await s.close();
    }
  });
});

describe('rate limits with Redis unreachable', () => {
  it('still hold, per process, through the in-memory stand-in', async () => {
    const s = await startServer('sqlite', { ...LIMITS, RATE_LIMIT_READ: '2', REDIS_URL: 'redis://127.0.0.1:1' });
    try {
      const { key } = await s.account(1);
      expect((await s.call('GET', '/api/v1/user/balance', { key })).status).toBe(200);
      expect((await s.call('GET', '/api/v1/user/balance', { key })).status).toBe(200);
      expect((await s.call('GET', '/api/v1/user/balance', { key })).status).toBe(429);
    } finally {
      await s.close();
    }
  }, 20_000);
});
