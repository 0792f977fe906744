import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { startServer, type TestServer } from '../helpers/server.js';

const APP = 'https://app.example.com';
const OTHER = 'https://evil.example.net';
const PUBLIC = ['/api/v1/models', '/v1/pricing', '/v1/pricing/calculate?model=suno-v6', '/openapi.json'];

/** Issue 17 finding 6: public reads answer CORS for every origin; the keyed API only for the origins of CORS_ORIGINS. */
describe('CORS', () => {
  let s: TestServer;
  let key: string;
  beforeAll(async () => {
    s = await startServer('sqlite', { CORS_ORIGINS: `${APP}, http://localhost:5173/` });
    key = (await s.account(5)).key;
  });
  afterAll(() => s.close());

  const send = (method: string, path: string, headers: Record<string, string> = {}) => fetch(s.url + path, { method, headers });

  it('public endpoints answer every origin, with or without an Origin header, and their preflight', async () => {
    for (const path of PUBLIC) {
      for (const headers of [{}, { origin: OTHER }] as Array<Record<string, string>>) {
        const r = await send('GET', path, headers);
        expect(r.status, path).toBe(200);
        expect(r.headers.get('access-control-allow-origin'), path).toBe('*');
      }
      const pre = await send('OPTIONS', path.split('?')[0]!, { origin: OTHER, 'access-control-request-method': 'GET' });
      expect(pre.status, path).toBe(204);
      expect(pre.headers.get('access-control-allow-origin')).toBe('*');
      expect(pre.headers.get('access-control-allow-methods')).toContain('GET');
    }
    expect((await send('GET', '/v1/pricing', { origin: OTHER })).headers.get('access-control-expose-headers')).toContain('etag');
  });

  it('the keyed API answers an origin of CORS_ORIGINS (errors included), and no other', async () => {
    const auth = { authorization: `Bearer ${key}` };
    const allowed = await send('GET', '/api/v1/user/balance', { ...auth, origin: APP });
    expect(allowed.status).toBe(200);
    expect(allowed.headers.get('access-control-allow-origin')).toBe(APP);
    expect(allowed.headers.get('vary')).toMatch(/origin/i);
    expect(allowed.headers.get('access-control-expose-headers')).toContain('ratelimit-remaining');
    expect((await send('GET', '/api/v1/jobs/list', { ...auth, origin: 'http://localhost:5173' })).headers.get('access-control-allow-origin')).toBe(
      'http://localhost:5173',
    );
    // A page must be able to read why it was refused.
    const refused = await send('GET', '/api/v1/jobs/list', { origin: APP });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('access-control-allow-origin')).toBe(APP);
    const unparsable = await fetch(`${s.url}/api/v1/jobs/createTask`, {
      method: 'POST',
      headers: { ...auth, origin: APP, 'content-type': 'application/json' },
      body: '{',
    });
    expect(unparsable.status).toBe(400);
    expect(unparsable.headers.get('access-control-allow-origin')).toBe(APP);
    for (const headers of [{ ...auth, origin: OTHER }, auth]) {
      const r = await send('GET', '/api/v1/user/balance', headers);
      expect(r.status).toBe(200);
      expect(r.headers.get('access-control-allow-origin')).toBeNull();
    }
  });

  it("the keyed API's preflight allows the key, JSON and idempotency headers for CORS_ORIGINS only", async () => {
    const ask = { 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type, idempotency-key' };
    const pre = await send('OPTIONS', '/api/v1/jobs/createTask', { ...ask, origin: APP });
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-origin')).toBe(APP);
    expect(pre.headers.get('access-control-allow-methods')).toBe('POST');
    expect(pre.headers.get('access-control-allow-headers')!.split(/,\s*/)).toEqual(
      expect.arrayContaining(['authorization', 'content-type', 'idempotency-key']),
    );
    expect((await send('OPTIONS', '/api/v1/files/upload', { ...ask, origin: APP })).headers.get('access-control-allow-origin')).toBe(APP);
    const other = await send('OPTIONS', '/api/v1/jobs/createTask', { ...ask, origin: OTHER });
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('without CORS_ORIGINS the keyed API answers no origin; a malformed CORS_ORIGINS stops the start', async () => {
    const plain = await startServer('sqlite');
    try {
      const a = await plain.account(1);
      const r = await fetch(`${plain.url}/api/v1/user/balance`, { headers: { authorization: `Bearer ${a.key}`, origin: APP } });
      expect(r.status).toBe(200);
      expect(r.headers.get('access-control-allow-origin')).toBeNull();
    } finally {
      await plain.close();
    }
    expect(() => loadConfig({ DATA_DIR: '/tmp', CORS_ORIGINS: 'https://app.example.com/path' })).toThrow(/CORS_ORIGINS/);
    expect(() => loadConfig({ DATA_DIR: '/tmp', CORS_ORIGINS: '*' })).toThrow(/CORS_ORIGINS/);
  });
});
