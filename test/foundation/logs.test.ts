import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { buildServices, type Services } from '../../src/services.js';
import { buildApp } from '../../src/http/app.js';
import { createTestDb, type TestDb } from '../helpers/db.js';

describe('logs', () => {
  let db: TestDb;
  let services: Services;
  const lines: Array<Record<string, unknown>> = [];
  const stream = new PassThrough();
  stream.on('data', (d: Buffer) => {
    for (const l of d.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(l));
  });
  beforeAll(async () => {
    db = await createTestDb('sqlite');
    services = await buildServices(loadConfig({ DATABASE_URL: db.url, DATA_DIR: db.dir, LOG_LEVEL: 'debug' }));
  });
  afterAll(async () => {
    await services.close();
    await db.drop();
  });

  it('are one JSON line per request with the request id, and never show keys or secrets', async () => {
    const { apiKey } = await services.accounts.create('logs', 1_000_000);
    const app = buildApp(services, { logStream: stream });
    app.get('/api/v1/test-log', async (req) => {
      req.log.info({ apiKey, account: { webhookSecret: 'whsec_topsecret' }, headers: req.headers }, 'handler saw a key');
      return { code: 200, msg: 'success', data: null };
    });
    await app.ready();
    const res = await app.inject({ url: '/api/v1/user/balance', headers: { authorization: `Bearer ${apiKey}`, 'x-request-id': 'log-test-1' } });
    expect(res.statusCode).toBe(200);
    await app.inject({ url: '/api/v1/test-log', headers: { authorization: `Bearer ${apiKey}` } });
    await app.close();
    const text = JSON.stringify(lines);
    expect(text).not.toContain(apiKey);
    expect(text).not.toContain('whsec_topsecret');
    const request = lines.find((l) => l.requestId === 'log-test-1' && l.msg === 'request');
    expect(request).toMatchObject({ method: 'GET', url: '/api/v1/user/balance', status: 200 });
    expect(lines.filter((l) => l.requestId === 'log-test-1')).toHaveLength(1);
    expect(lines.find((l) => l.msg === 'handler saw a key')).toMatchObject({ apiKey: '[redacted]', headers: { authorization: '[redacted]' } });
  });
});
