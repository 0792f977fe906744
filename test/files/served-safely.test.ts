import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { buildServices, type Services } from '../../src/services.js';
import { buildApp } from '../../src/http/app.js';
import { createTestDb, dialects, type TestDb } from '../helpers/db.js';
import { UNLIMITED } from '../helpers/server.js';

/** A 1×1 PNG. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');

/**
 * Issue 39 findings 10 and 14: a download link's token is a credential and never appears in the
 * request log at the default level; every /files answer carries nosniff and a sandboxing CSP.
 */
describe.each(dialects())('files are served safely (%s)', (dialect) => {
  let db: TestDb;
  let services: Services;
  let app: ReturnType<typeof buildApp>;
  let key: string;
  let log = '';
  beforeAll(async () => {
    db = await createTestDb(dialect);
    services = await buildServices(loadConfig({ DATABASE_URL: db.url, DATA_DIR: db.dir, LOG_LEVEL: 'info', MODERATION_IMAGES: 'off', ...UNLIMITED }));
    const stream = new PassThrough();
    stream.on('data', (d: Buffer) => (log += d.toString()));
    app = buildApp(services, { logStream: stream });
    await app.ready();
    key = (await services.accounts.create('files', 1_000_000)).apiKey;
  });
  afterAll(async () => {
    await app.close();
    await services.close();
    await db.drop();
  });

  async function uploaded(): Promise<{ link: string; dl: string }> {
    const up = await app.inject({
      method: 'POST',
      url: '/api/file-base64-upload',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      payload: { base64Data: PNG.toString('base64'), fileName: 'dot.png' },
    });
    expect(up.statusCode, up.body).toBe(200);
    const link = new URL(up.json().data.downloadUrl as string).pathname;
    const dl = await app.inject({
      method: 'POST',
      url: '/api/v1/common/download-url',
      headers: { authorization: `Bearer ${key}` },
      payload: { url: up.json().data.downloadUrl },
    });
    expect(dl.statusCode, dl.body).toBe(200);
    return { link, dl: new URL(dl.json().data as string).pathname };
  }

  it('the token of a download link is not in the request log (info level)', async () => {
    const { dl } = await uploaded();
    const token = dl.split('/')[3]!;
    expect(token.length).toBeGreaterThan(10);
    const res = await app.inject({ url: dl, headers: { 'x-request-id': 'dl-log-1' } });
    expect(res.statusCode).toBe(200);
    const miss = await app.inject({ url: `${dl.slice(0, -7)}x.png?a=1`, headers: { 'x-request-id': 'dl-log-2' } });
    expect(miss.statusCode).toBe(404);
    const lines = log
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.find((l) => l.requestId === 'dl-log-1')).toMatchObject({ msg: 'request', url: '/files/dl/[redacted]/dot.png', status: 200 });
    expect(lines.find((l) => l.requestId === 'dl-log-2')).toMatchObject({ url: '/files/dl/[redacted]/x.png?a=1', status: 404 });
    expect(log).not.toContain(token);
  });

  it('every /files answer has nosniff and a sandboxing CSP (200, 206, 404, download links)', async () => {
    const { link, dl } = await uploaded();
    const answers = [
      await app.inject({ url: link }),
      await app.inject({ url: link, headers: { range: 'bytes=0-3' } }),
      await app.inject({ url: '/files/AAAAAAAAAAAAAAAAAAAAAA/nothing.html' }),
      await app.inject({ url: dl }),
      await app.inject({ method: 'HEAD', url: link }),
    ];
    expect(answers.map((a) => a.statusCode)).toEqual([200, 206, 404, 200, 200]);
    for (const a of answers) {
      expect(a.headers['x-content-type-options']).toBe('nosniff');
      expect(String(a.headers['content-security-policy'])).toMatch(/^sandbox; default-src 'none'/);
    }
  });
});
