import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';
import { ok, okJson } from '../../src/api/index.js';

describe('HTTP envelope, request ids and error mapping', () => {
  let s: TestServer;
  let key: string;
  beforeAll(async () => {
    s = await startServer('sqlite', { BODY_LIMIT_BYTES: '2048' }, (app) => {
      app.get('/api/v1/test-boom', async () => {
        throw new Error('secret internals at /srv/db password=hunter2');
      });
      app.post('/api/v1/test-echo', async (req) => ({ code: 200, msg: 'success', data: req.body }));
    });
    key = (await s.account(10)).key;
  });
  afterAll(() => s.close());

  it('answers unknown routes with the 404 envelope', async () => {
    const r = await s.call('GET', '/api/v1/no/such/route');
    expect(r.status).toBe(404);
    expect(r.body).toEqual({ code: 404, msg: 'no route GET /api/v1/no/such/route', data: null, error: 'not_found' });
  });

  it('answers malformed JSON with 400 invalid_request_error', async () => {
    const r = await s.call('POST', '/api/v1/test-echo', { body: '{"model": ', headers: { 'content-type': 'application/json' } });
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ code: 400, data: null, error: 'invalid_request_error' });
    expect(r.body.msg).toMatch(/not valid JSON/);
  });

  it('answers an empty JSON body with 400', async () => {
    const r = await s.call('POST', '/api/v1/test-echo', { headers: { 'content-type': 'application/json' } });
    expect(r.status).toBe(400);
    expect(r.body.error).toBe('invalid_request_error');
  });

  it('answers a body over the limit with 422 naming the limit', async () => {
    const r = await s.call('POST', '/api/v1/test-echo', { body: { pad: 'x'.repeat(5000) } });
    expect(r.status).toBe(422);
    expect(r.body).toMatchObject({ code: 422, error: 'validation_error', data: null });
    expect(r.body.msg).toContain('2048 bytes');
  });

  it('answers a wrong content type with 400 naming it', async () => {
    const r = await s.call('POST', '/api/v1/test-echo', { body: 'hello', headers: { 'content-type': 'text/plain' } });
    expect(r.status).toBe(400);
    expect(r.body.error).toBe('invalid_request_error');
    expect(r.body.msg).toMatch(/Content-Type must be application\/json/);
  });

  it('answers missing, malformed and unknown keys with 401', async () => {
    for (const authorization of [undefined, 'Basic abc', 'Bearer', 'Bearer a b', `Bearer ${'x'.repeat(300)}`, 'Bearer gg_unknown']) {
      const r = await s.call('GET', '/api/v1/user/balance', { headers: authorization ? { authorization } : {} });
      expect(r.status, String(authorization)).toBe(401);
      expect(r.body).toMatchObject({ code: 401, data: null, error: 'authentication_error' });
      expect(r.body.msg.length).toBeGreaterThan(5);
    }
  });

  it('turns an unexpected error into a 500 that leaks nothing', async () => {
    const r = await s.call('GET', '/api/v1/test-boom');
    expect(r.status).toBe(500);
    expect(r.body).toMatchObject({ code: 500, error: 'server_error', data: null });
    expect(JSON.stringify(r.body)).not.toMatch(/hunter2|secret|\/srv|at .*\.ts/);
    expect(r.body.msg).toContain(r.headers.get('x-request-id'));
  });

  it('puts x-request-id on every response and echoes a sane incoming one', async () => {
    const ok = await s.call('GET', '/api/v1/user/balance', { key });
    const err = await s.call('GET', '/api/v1/user/balance');
    const missing = await s.call('GET', '/nothing-here');
    for (const r of [ok, err, missing]) expect(r.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const echoed = await s.call('GET', '/api/v1/user/balance', { key, headers: { 'x-request-id': 'client-req-42' } });
    expect(echoed.headers.get('x-request-id')).toBe('client-req-42');
    const refused = await s.call('GET', '/api/v1/user/balance', { key, headers: { 'x-request-id': 'bad id\twith junk' } });
    expect(refused.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('ERROR_STYLE=reference', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer('sqlite', { ERROR_STYLE: 'reference' }, (app) => {
      app.post('/api/v1/test-echo', async (req) => req.body);
    });
  });
  afterAll(() => s.close());

  it('uses the endpoint-reference identifiers', async () => {
    const unauth = await s.call('GET', '/api/v1/user/balance');
    expect(unauth.status).toBe(401);
    expect(unauth.body.error).toBe('unauthorized');
    const bad = await s.call('POST', '/api/v1/test-echo', { body: '{', headers: { 'content-type': 'application/json' } });
    expect(bad.status).toBe(422);
    expect(bad.body).toMatchObject({ code: 422, error: 'validation_error' });
  });
});

describe('the success envelope as text', () => {
  it('is the same text as serialising the envelope object', () => {
    for (const data of [{ taskId: 'tk_1', n: 1.5, s: 'a "quoted" \u2028 line' }, null, [1, 2]]) {
      expect(okJson(JSON.stringify(data))).toBe(JSON.stringify(ok(data)));
    }
  });
});
