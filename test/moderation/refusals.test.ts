import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { upload } from '../files/support.js';
import { FAST } from '../tasks/support.js';
import { startPhotoSink } from './photos.js';

// Issue 17, item 1: a key with no money, or one account's flood, must not take the image classifier from other tenants.
describe.each(dialects())('the content check does not let one account stall the others, on %s', (dialect) => {
  let s: TestServer;
  let sink: Awaited<ReturnType<typeof startPhotoSink>>;
  let holder: Awaited<ReturnType<typeof startPhotoSink>>;
  let pngFile: string;
  beforeAll(async () => {
    sink = await startPhotoSink(false);
    holder = await startPhotoSink(true);
    // On PostgreSQL the limits live in Redis when there is one, as they would with several processes.
    const redis: Record<string, string> = dialect === 'postgres' && process.env.TEST_REDIS_URL ? { REDIS_URL: process.env.TEST_REDIS_URL } : {};
    s = await startServer(dialect, {
      ...FAST,
      ...redis,
      ALLOW_PRIVATE_NETWORK: 'true',
      MODERATION_WORDS: 'forbiddenword',
      MODERATION_CHECKS_PER_ACCOUNT: '1',
      RATE_LIMIT_WRITE: '10',
      MODERATION_REJECT_COST: '5',
    });
    pngFile = path.join(s.db.dir, 'photo.png');
    await writeFile(
      pngFile,
      await sharp({ create: { width: 64, height: 64, channels: 3, background: { r: 40, g: 90, b: 160 } } })
        .png()
        .toBuffer(),
    );
  });
  afterAll(async () => {
    await s.close();
    await sink.close();
    await holder.close();
  });

  const createWith = (key: string, input: Record<string, unknown>) =>
    s.call('POST', '/api/v1/jobs/createTask', { key, body: { model: 'nano-banana-2', input } });
  const classified = () => s.services.moderation.classifier!.stats().classified;
  /** An upload link to a harmless photo of the key's account (checked from the blob store, no network). */
  const uploaded = async (key: string): Promise<string> => {
    const r = await upload(s, key, pngFile, 'photo.png');
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body.data.url as string;
  };

  it('answers a key with no money 402 before the content check: no photo fetched, none classified', async () => {
    const broke = await s.account(0);
    const before = classified();
    const image_input = Array.from({ length: 14 }, (_, i) => `${sink.url}/broke/${i}.png`);
    const res = await createWith(broke.key, { prompt: 'a cat', image_input, nsfw_check: true });
    expect(res.status, JSON.stringify(res.body)).toBe(402);
    expect(res.body.msg).toMatch(/^balance 0\.0000 USD is less than the price \d+\.\d{3} USD of this task; top up at /);
    expect(sink.connections()).toBe(0);
    expect(classified()).toBe(before);
  });

  it('answers 429 with Retry-After past the account\u2019s share of checks, while another account is checked and charged', async () => {
    const a = await s.account(1);
    const b = await s.account(1);
    const aPhoto = await uploaded(a.key);
    const bPhoto = await uploaded(b.key);
    const first = createWith(a.key, { prompt: 'a cat', image_input: [`${holder.url}/a1.png`], nsfw_check: true });
    await holder.held();
    const before = classified();
    const second = await createWith(a.key, { prompt: 'a dog', image_input: [aPhoto], nsfw_check: true });
    expect(second.status, JSON.stringify(second.body)).toBe(429);
    expect(Number(second.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(second.body.msg).toMatch(
      /^this account already has 1 content checks with photos running \(at most 1 at once\); nothing was created or charged; retry in \d+ s$/,
    );
    expect(classified()).toBe(before);
    const other = await createWith(b.key, { prompt: 'a bird', image_input: [bPhoto], nsfw_check: true });
    expect(other.status, JSON.stringify(other.body)).toBe(200);
    expect(classified()).toBe(before + 1);
    expect((await s.call('GET', '/api/v1/user/balance', { key: b.key })).body.data.balance).not.toBe('1.0000');
    holder.release();
    expect((await first).status).toBe(400);
    expect((await s.call('GET', '/api/v1/user/balance', { key: a.key })).body.data.balance).toBe('1.0000');
    // Once the first check is done the account's share is free again.
    expect((await createWith(a.key, { prompt: 'a dog', image_input: [aPhoto], nsfw_check: true })).status).toBe(200);
  }, 60_000);

  it('counts a content-check refusal against the key\u2019s write limit', async () => {
    const a = await s.account(1);
    // Limit 10 per window; each refusal uses its own request and 5 more points.
    const refused = await createWith(a.key, { prompt: 'a forbiddenword cat', nsfw_check: true });
    expect(refused.status).toBe(400);
    expect(refused.headers.get('ratelimit-remaining')).toBe('9');
    expect((await createWith(a.key, { prompt: 'a forbiddenword dog', nsfw_check: true })).status).toBe(400);
    const limited = await createWith(a.key, { prompt: 'a calm cat', nsfw_check: true });
    expect(limited.status, JSON.stringify(limited.body)).toBe(429);
    expect(limited.body.msg).toMatch(/^rate limit exceeded: at most 10 createTask and upload requests per API key every 10 s; retry in \d+ s$/);
    // Another account's key is not touched.
    const b = await s.account(1);
    expect((await createWith(b.key, { prompt: 'a calm cat', nsfw_check: true })).status).toBe(200);
  });
});
