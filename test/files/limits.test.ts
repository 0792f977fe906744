import { request } from 'node:http';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { eventually } from '../tasks/support.js';

const MB = 1024 * 1024;
const BOUNDARY = 'gengate-limit-test';

/** What a streaming client saw: the status (if an answer came), bytes it managed to send, the peak RSS growth. */
interface Outcome {
  status: number | null;
  body: any;
  sent: number;
  peakGrowth: number;
}

/**
 * Sends a multipart upload of `total` bytes, made lazily in 1 MB chunks that start like an MP4, and
 * stops writing once the server answers or closes; samples this process's RSS (server included) meanwhile.
 */
function streamUpload(s: TestServer, key: string, total: number): Promise<Outcome> {
  return new Promise((resolve) => {
    const base = process.memoryUsage().rss;
    let peak = base;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 5);
    const chunk = Buffer.alloc(MB);
    const ftyp = Buffer.from('000000186674797069736f6d0000020069736f6d69736f32', 'hex');
    let sent = 0;
    let status: number | null = null;
    let body = '';
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      clearInterval(sampler);
      let parsed: unknown = body;
      try {
        parsed = JSON.parse(body);
      } catch {
        /* keep text */
      }
      resolve({ status, body: parsed, sent, peakGrowth: peak - base });
    };
    const req = request(`${s.url}/api/v1/files/upload`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
    });
    req.on('response', (res) => {
      status = res.statusCode ?? null;
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', finish);
      res.on('error', finish);
      res.on('close', finish);
    });
    // Without an answer the end of the connection is the end; an answer ends with its own end or close (above).
    req.on('error', () => status === null && finish());
    req.on('close', () => status === null && finish());
    req.write(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="huge.mp4"\r\nContent-Type: video/mp4\r\n\r\n`);
    const pump = () => {
      while (!done && status === null && !req.destroyed && sent < total) {
        const part = sent === 0 ? Buffer.concat([ftyp, chunk.subarray(ftyp.length)]) : chunk;
        sent += part.length;
        if (!req.write(part)) return void req.once('drain', pump);
      }
      if (sent >= total && !req.destroyed) req.end(`\r\n--${BOUNDARY}--\r\n`);
    };
    pump();
  });
}

describe.each(dialects())('upload size limit while streaming on %s', (dialect) => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer(dialect, { RUN_ENGINE: 'false', UPLOAD_MAX_MEDIA_BYTES: String(16 * MB) });
  });
  afterAll(() => s.close());

  it('cuts a 1 GB body off at the limit, with flat memory and nothing half-written left', async () => {
    const { key } = await s.account(1);
    const out = await streamUpload(s, key, 1024 * MB);
    expect(out.status).toBe(422);
    expect(out.body).toMatchObject({ code: 422, error: 'validation_error' });
    expect(out.body.msg).toMatch(/at most 16 MB for a video file \(MP4\).*cut off/);
    // The server stopped reading near the limit: the client could not push the gigabyte through.
    expect(out.sent).toBeLessThan(200 * MB);
    expect(out.peakGrowth).toBeLessThan(64 * MB);
    await eventually(async () => (await readdir(path.join(s.config.DATA_DIR, 'tmp'))).length === 0, 15_000, 'the partial upload to be removed');
    expect(await readdir(path.join(s.config.DATA_DIR, 'files')).catch(() => [])).toEqual([]);
    const rows = await s.services.database.db.selectFrom('files').select('id').execute();
    expect(rows).toEqual([]);
    // The server still answers after cutting a client off.
    expect((await s.call('GET', '/api/v1/user/balance', { key })).status).toBe(200);
  });
});
