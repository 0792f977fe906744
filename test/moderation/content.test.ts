import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalModerator, NsfwjsClassifier, ModerationUnavailable, TextMatcher, contentCheck, moderationRequest } from '../../src/moderation/index.js';
import { dialects } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { FAST } from '../tasks/support.js';
import { startReceiver } from '../callbacks/receiver.js';

const noPhotos = async () => Buffer.alloc(0);
const asker = { accountId: 'acc_1', keyId: 'key_1', limits: { write: null } };

describe('the local moderator', () => {
  it('collects the prompt and photo links, not other links', () => {
    const req = moderationRequest({
      prompt: 'a cat',
      image_urls: ['https://a/x.png'],
      first_frame_url: 'https://a/f.jpg',
      video_urls: ['https://a/v.mp4'],
      nsfw_check: true,
    });
    expect(req.texts).toEqual([['input.prompt', 'a cat']]);
    expect(req.photos).toEqual([
      ['input.image_urls[0]', 'https://a/x.png'],
      ['input.first_frame_url', 'https://a/f.jpg'],
    ]);
  });

  it('rejects profanity from the maintained list and from the operator list', async () => {
    const m = new LocalModerator(new TextMatcher(['Blorf']), null, noPhotos, { threshold: 0.7, failOpen: false });
    expect(await m.check({ texts: [['input.prompt', 'a fucking cat']], photos: [] })).toMatchObject({ ok: false });
    expect(await m.check({ texts: [['input.prompt', 'a BLORF cat']], photos: [] })).toEqual({
      ok: false,
      reason: 'input.prompt was rejected by the content check',
    });
    expect(await m.check({ texts: [['input.prompt', 'a blorfish cat on Scunthorpe street']], photos: [] })).toEqual({ ok: true });
  });

  it('fails closed when the classifier cannot run, or open when configured', async () => {
    const broken = {
      score: async () => {
        throw new ModerationUnavailable('the image classifier could not be loaded (test)', false);
      },
    };
    const closed = contentCheck(new LocalModerator(new TextMatcher([]), broken, noPhotos, { threshold: 0.7, failOpen: false }));
    await expect(closed({ prompt: 'a cat', image_urls: ['https://a/x.png'], nsfw_check: true }, asker)).rejects.toMatchObject({
      kind: 'internal',
      message: expect.stringMatching(/could not be loaded .*nothing was created or charged/),
    });
    const open = contentCheck(new LocalModerator(new TextMatcher([]), broken, noPhotos, { threshold: 0.7, failOpen: true }));
    await expect(open({ prompt: 'a cat', image_urls: ['https://a/x.png'], nsfw_check: true }, asker)).resolves.toBeUndefined();
  });

  it('classifies an image with the model shipped in the npm package (no download), in a worker thread', async () => {
    const png = await sharp({ create: { width: 64, height: 48, channels: 3, background: { r: 20, g: 120, b: 200 } } })
      .png()
      .toBuffer();
    const classifier = new NsfwjsClassifier();
    try {
      const score = await classifier.score(png);
      expect(score).toBeGreaterThanOrEqual(0);
      expect(score).toBeLessThan(0.7);
      await expect(classifier.score(Buffer.from('not an image'))).rejects.toMatchObject({ clientFault: true });
      expect(classifier.stats().classified).toBe(1);
    } finally {
      await classifier.close();
    }
  }, 60_000);
});

describe.each(dialects())('nsfw_check on createTask on %s', (dialect) => {
  let s: TestServer;
  let r: Awaited<ReturnType<typeof startReceiver>>;
  beforeAll(async () => {
    r = await startReceiver(() => 200);
    s = await startServer(dialect, { ...FAST, MODERATION_WORDS: 'forbiddenword', ALLOW_PRIVATE_NETWORK: 'true' });
  });
  afterAll(async () => {
    await s.close();
    await r.close();
  });

  const createWith = (key: string, input: Record<string, unknown>) =>
    s.call('POST', '/api/v1/jobs/createTask', { key, body: { model: 'nano-banana-2', input } });

  it('rejects a listed word with 400 nsfw_content_detected: no task, no charge', async () => {
    const a = await s.account(1);
    const res = await createWith(a.key, { prompt: 'a forbiddenword cat', nsfw_check: true });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: 'nsfw_content_detected' });
    expect(res.body.msg).toMatch(/input\.prompt was rejected .*nothing was charged/);
    expect((await s.call('GET', '/api/v1/user/balance', { key: a.key })).body.data.balance).toBe('1.0000');
    expect((await s.call('GET', '/api/v1/jobs/list', { key: a.key })).body.data.items ?? []).toHaveLength(0);
  });

  it('lets the same prompt through without nsfw_check, and a clean prompt with it', async () => {
    const a = await s.account(1);
    expect((await createWith(a.key, { prompt: 'a forbiddenword cat' })).status).toBe(200);
    expect((await createWith(a.key, { prompt: 'a calm cat', nsfw_check: true })).status).toBe(200);
  });

  it('refuses a photo that cannot be downloaded with 400 naming the field, charging nothing', async () => {
    const a = await s.account(1);
    const res = await createWith(a.key, { prompt: 'a cat', image_input: [`https://127.0.0.1:1/x.png`], nsfw_check: true });
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.msg).toMatch(/image_input\[0\] could not be downloaded for the content check/);
    expect((await s.call('GET', '/api/v1/user/balance', { key: a.key })).body.data.balance).toBe('1.0000');
  });
});
