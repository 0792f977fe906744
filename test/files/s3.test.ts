import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import type { S3BlobStore } from '../../src/files/s3.js';
import { startS3, type TestS3 } from '../helpers/s3.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { useTmpDir } from '../media/helpers.js';
import { FAST, MovableClock, create, fetchFile, resultUrls, settle } from '../tasks/support.js';

let s3: TestS3;
beforeAll(async () => {
  s3 = await startS3();
});
afterAll(() => s3?.close());

const text = async (stream: NodeJS.ReadableStream) => {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
};

describe('S3 settings', () => {
  const fails = (env: Record<string, string>, msg: RegExp) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(msg);
  };
  it('names what is missing or wrong', () => {
    fails({ S3_ENDPOINT: 'http://127.0.0.1:9000' }, /S3_BUCKET: is required when S3_ENDPOINT is set.*\(not set\)/);
    fails({ S3_BUCKET: 'b-1', S3_ACCESS_KEY_ID: 'k' }, /S3_SECRET_ACCESS_KEY: S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY must be set together/);
    fails({ FILE_LINKS: 'presigned' }, /FILE_LINKS: presigned links need the S3 store \(set S3_BUCKET\)/);
    fails({ FILE_LINKS: 'direct' }, /FILE_LINKS: .*"proxy".*"presigned".*got "direct"/);
    fails({ S3_BUCKET: 'Bad_Bucket' }, /S3_BUCKET: must be an S3 bucket name/);
    fails({ S3_ENDPOINT: 'ftp://x', S3_BUCKET: 'b-1' }, /S3_ENDPOINT: must start with http/);
    fails({ S3_CHECKSUMS: 'never', S3_BUCKET: 'b-1' }, /S3_CHECKSUMS: .*WHEN_REQUIRED/);
    fails({ ROLE: 'worker', RUN_ENGINE: 'false' }, /RUN_ENGINE: cannot be false with ROLE=worker/);
    fails({ ROLE: 'both' }, /ROLE: .*"api".*"worker".*"all"/);
    expect(loadConfig({ S3_BUCKET: 'b-1' })).toMatchObject({ S3_BUCKET: 'b-1', S3_REGION: 'us-east-1', FILE_LINKS: 'proxy', ROLE: 'all' });
  });
});

describe('S3BlobStore against an S3 emulator', () => {
  const tmp = useTmpDir();
  let store: S3BlobStore;
  beforeAll(() => {
    store = s3.store('unit/');
  });
  afterAll(() => store.close());

  it('stores, reads ranges, sizes and deletes (twice without error)', async () => {
    const bytes = randomBytes(10_000);
    await store.putBytes('ab/one', bytes);
    expect(await store.size('ab/one')).toBe(10_000);
    expect((await text(store.read('ab/one'))).equals(bytes)).toBe(true);
    expect((await text(store.read('ab/one', { start: 100, end: 199 }))).equals(bytes.subarray(100, 200))).toBe(true);
    await store.delete('ab/one');
    await store.delete('ab/one');
    expect(await store.size('ab/one')).toBeNull();
    await expect(text(store.read('ab/none'))).rejects.toThrow();
  });

  it('uploads a large file in parts and takes the file over with move', async () => {
    const big = randomBytes(20 * 1024 * 1024); // above the 8 MiB part size: a multipart upload
    await writeFile(tmp('big.bin'), big);
    await store.putFile('cd/big', tmp('big.bin'), { move: true });
    expect(existsSync(tmp('big.bin'))).toBe(false);
    expect(await store.size('cd/big')).toBe(big.length);
    const tail = await text(store.read('cd/big', { start: big.length - 1000, end: big.length - 1 }));
    expect(tail.equals(big.subarray(big.length - 1000))).toBe(true);
    await store.delete('cd/big');
  });
});

it('readiness fails when the bucket does not exist', async () => {
  const s = await startServer('sqlite', { ...s3.env, S3_BUCKET: 'no-such-bucket' });
  const r = await s.call('GET', '/readyz');
  expect(r.status).toBe(503);
  expect(r.body.checks).toMatchObject({ database: 'ok', blobs: expect.stringMatching(/^error/) });
  const ok = await startServer('sqlite', s3.env);
  expect((await ok.call('GET', '/readyz')).status).toBe(200);
  await Promise.all([s.close(), ok.close()]);
});

describe.each(['proxy', 'presigned'])('GenGate on the S3 store, FILE_LINKS=%s', (links) => {
  let s: TestServer;
  const clock = new MovableClock();
  beforeAll(async () => {
    s = await startServer('sqlite', { ...FAST, ...s3.env, S3_PREFIX: `${links}/`, FILE_LINKS: links }, undefined, { clock });
    s.services.engine.start();
  });
  afterAll(() => s.close());

  it('stores results in the bucket, serves them, and deletes them at expiry', async () => {
    const a = await s.account(1);
    const t = await settle(s, a.key, await create(s, a.key, 'seedream-flash', { prompt: 'x', output_format: 'jpeg' }));
    const [link] = resultUrls(t);
    const [row] = await s.services.database.db.selectFrom('files').select(['blob_key', 'bytes']).where('task_id', '=', t.taskId).execute();
    // The object is in the bucket, under the prefix (read with a separate client).
    const other = s3.store(`${links}/`);
    expect(await other.size(row!.blob_key)).toBe(Number(row!.bytes));
    const whole = await fetchFile(s, link!, {}, 'GET');
    expect(whole.status).toBe(200);
    expect(whole.headers.get('content-type')).toBe('image/jpeg');
    const bytes = Buffer.from(await whole.arrayBuffer());
    expect(bytes.length).toBe(Number(row!.bytes));
    if (links === 'proxy') {
      const part = await fetchFile(s, link!, { range: 'bytes=10-19' });
      expect(part.status).toBe(206);
      expect(part.headers.get('content-range')).toBe(`bytes 10-19/${bytes.length}`);
      expect(Buffer.from(await part.arrayBuffer()).equals(bytes.subarray(10, 20))).toBe(true);
      const head = await fetchFile(s, link!, {}, 'HEAD');
      expect(head.headers.get('content-length')).toBe(String(bytes.length));
    } else {
      const redirect = await fetch(s.url + new URL(link!).pathname, { redirect: 'manual' });
      expect(redirect.status).toBe(302);
      const location = redirect.headers.get('location')!;
      expect(location.startsWith(`${s3.endpoint}/${s3.bucket}/presigned/`)).toBe(true);
      // Signed for an hour at most (the file lives 24 h), with the type and name GenGate would send.
      expect(location).toMatch(/X-Amz-Signature=[0-9a-f]{64}/);
      expect(location).toMatch(/X-Amz-Expires=3600&/);
      expect(decodeURIComponent(location)).toMatch(/response-content-type=image\/jpeg/);
    }
    clock.advance(24 * 3_600_000 + 1);
    expect((await fetch(s.url + new URL(link!).pathname, { redirect: 'manual' })).status).toBe(404);
    await s.services.engine.tick();
    expect(await other.size(row!.blob_key)).toBeNull();
    other.close();
  });

  it('serves a download link of POST /common/download-url; a presigned redirect ends with the link (20 minutes)', async () => {
    const a = await s.account(1);
    const t = await settle(s, a.key, await create(s, a.key, 'seedream-flash', { prompt: 'x', output_format: 'jpeg' }));
    const [link] = resultUrls(t);
    const dl = (await s.call('POST', '/api/v1/common/download-url', { key: a.key, body: { url: link } })).body.data as string;
    const original = Buffer.from(await (await fetchFile(s, link!)).arrayBuffer());
    if (links === 'proxy') {
      const got = await fetchFile(s, dl);
      expect(got.status).toBe(200);
      expect(Buffer.from(await got.arrayBuffer()).equals(original)).toBe(true);
    } else {
      const redirect = await fetch(s.url + new URL(dl).pathname, { redirect: 'manual' });
      expect(redirect.status).toBe(302);
      const seconds = Number(/X-Amz-Expires=(\d+)&/.exec(redirect.headers.get('location')!)![1]);
      expect(seconds).toBeGreaterThan(1190);
      expect(seconds).toBeLessThanOrEqual(1200);
    }
    clock.advance(20 * 60_000 + 1);
    expect((await fetch(s.url + new URL(dl).pathname, { redirect: 'manual' })).status).toBe(404);
    expect((await fetch(s.url + new URL(link!).pathname, { redirect: 'manual' })).status).toBeLessThan(400);
  });
});
