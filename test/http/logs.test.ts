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

  it("writes the request line in pino's own shape, escaped, and only when info lines are on", async () => {
    const app = buildApp(services, { logStream: stream });
    await app.ready();
    lines.length = 0;
    await app.inject({ url: '/api/v1/odd/"quote"/\\back/ünï', headers: { 'x-request-id': 'log-test-2' } });
    await app.close();
    const request = lines.find((l) => l.requestId === 'log-test-2')!;
    expect(request).toMatchObject({ level: 30, pid: process.pid, msg: 'request', method: 'GET', status: 404 });
    expect(typeof request.time).toBe('number');
    expect(typeof request.hostname).toBe('string');
    expect(String(request.url)).toContain('/api/v1/odd/');
    const handlerLine = lines.find((l) => l.msg !== 'request');
    if (handlerLine) expect(Object.keys(handlerLine).slice(0, 4)).toEqual(['level', 'time', 'pid', 'hostname']);

    const quiet = await buildServices(loadConfig({ DATABASE_URL: db.url, DATA_DIR: db.dir, LOG_LEVEL: 'warn' }));
    const quietLines: string[] = [];
    const quietStream = new PassThrough();
    quietStream.on('data', (d: Buffer) => quietLines.push(d.toString()));
    const quietApp = buildApp(quiet, { logStream: quietStream });
    await quietApp.ready();
    await quietApp.inject({ url: '/api/v1/nothing' });
    await quietApp.close();
    await quiet.close();
    expect(quietLines.join('')).toBe('');
  });
});
