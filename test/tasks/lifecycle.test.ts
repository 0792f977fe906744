import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { probe } from '../../src/media/index.js';
import { dialects } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { FAST, MovableClock, create, eventually, expectLedgerInvariant, fetchFile, info, resultUrls, settle, taskEntries } from './support.js';

const scratch = mkdtempSync(path.join(tmpdir(), 'gengate-lifecycle-'));

/** Downloads a link to a file and probes it. */
async function download(s: TestServer, link: string, name: string) {
  const res = await fetchFile(s, link);
  expect(res.status).toBe(200);
  const file = path.join(scratch, `${Date.now()}-${name}`);
  writeFileSync(file, Buffer.from(await res.arrayBuffer()));
  return { res, file, info: await probe(file) };
}

describe.each(dialects())('the engine with the local backend on %s', (dialect) => {
  let s: TestServer;
  const clock = new MovableClock();
  beforeAll(async () => {
    s = await startServer(dialect, { ...FAST, LOCAL_GENERATE_MS: '150' }, undefined, { clock });
    s.services.engine.start();
  });
  afterAll(() => s.close());

  it('walks waiting → queuing → generating → success, one task_events row per change', async () => {
    // A generation of 10 minutes on a clock the test moves: the engine sees it generating however
    // slow the machine (with a real 150 ms one, a busy engine can miss that state), then the clock moves on.
    const slow = new MovableClock();
    const g = await startServer(dialect, { ...FAST, LOCAL_GENERATE_MS: '600000' }, undefined, { clock: slow });
    try {
      g.services.engine.start();
      const a = await g.account(1);
      const id = await create(g, a.key, 'nano-banana-2', { prompt: 'a lighthouse at dusk', resolution: '2K', aspect_ratio: '16:9' });
      await eventually(async () => (await info(g, a.key, id)).state === 'generating');
      slow.advance(600_000);
      const t = await settle(g, a.key, id);
      expect(t).toMatchObject({ state: 'success', status: 'completed', progress: 100, refunded: false, creditsConsumed: 0.06, failCode: '', error: null });
      expect(t.costTime).toBe(t.completeTime - t.createTime);
      const events = await g.services.database.db
        .selectFrom('task_events')
        .select(['from_state', 'to_state'])
        .where('task_id', '=', id)
        .orderBy('id')
        .execute();
      expect(events).toEqual([
        { from_state: null, to_state: 'waiting' },
        { from_state: 'waiting', to_state: 'queuing' },
        { from_state: 'queuing', to_state: 'generating' },
        { from_state: 'generating', to_state: 'success' },
      ]);
      const [link] = resultUrls(t);
      expect(typeof t.resultJson).toBe('string');
      expect(link).toMatch(new RegExp(`^${g.config.PUBLIC_BASE_URL}/files/[A-Za-z0-9_-]{22}/image\\.png$`));
      const { res, info: media } = await download(g, link!, 'a.png');
      expect(res.headers.get('content-type')).toBe('image/png');
      expect([media.width, media.height]).toEqual([2048, 1152]);
    } finally {
      await g.close();
    }
  });

  it('serves result files with Range support and answers 404 for wrong links', async () => {
    const a = await s.account(1);
    const t = await settle(s, a.key, await create(s, a.key, 'seedream-flash', { prompt: 'x', output_format: 'jpeg' }));
    const [link] = resultUrls(t);
    const whole = await fetchFile(s, link!);
    const size = Number(whole.headers.get('content-length'));
    expect(whole.headers.get('content-type')).toBe('image/jpeg');
    expect(whole.headers.get('accept-ranges')).toBe('bytes');
    const part = await fetchFile(s, link!, { range: 'bytes=0-9' });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes 0-9/${size}`);
    expect(Buffer.from(await part.arrayBuffer())).toEqual(Buffer.from(await whole.arrayBuffer()).subarray(0, 10));
    expect((await fetchFile(s, link!, { range: 'bytes=-4' })).headers.get('content-range')).toBe(`bytes ${size - 4}-${size - 1}/${size}`);
    expect((await fetchFile(s, link!, { range: `bytes=${size}-` })).status).toBe(416);
    const head = await fetchFile(s, link!, {}, 'HEAD');
    expect([head.status, head.headers.get('content-length')]).toEqual([200, String(size)]);
    expect((await fetchFile(s, link!.replace(/\/[^/]+$/, '/other.jpg'))).status).toBe(404);
    const bad = await s.call('GET', '/files/AAAAAAAAAAAAAAAAAAAAAA/image.jpg');
    expect(bad.body).toMatchObject({ code: 404, error: 'not_found' });
  });

  it('renders video at the asked resolution and aspect, with audio, as MOV, with the last frame', async () => {
    const a = await s.account(5);
    const input = { prompt: 'a train', resolution: '720p', aspect_ratio: '9:16', duration: 4, output_format: 'mov', return_last_frame: true };
    const t = await settle(s, a.key, await create(s, a.key, 'seedance-2.5', input));
    expect(t.state).toBe('success');
    expect(t.resultJson).toMatchObject({ videos: [{ url: expect.stringMatching(/video\.mov$/) }], duration: expect.closeTo(4, 0) });
    const video = await download(s, t.resultJson.videos[0].url, 'v.mov');
    expect(video.res.headers.get('content-type')).toBe('video/quicktime');
    expect(video.info).toMatchObject({ kind: 'video', width: 720, height: 1280, hasAudio: true });
    const frame = await download(s, t.lastFrameUrl, 'f.png');
    expect(frame.info).toMatchObject({ kind: 'image', width: 720, height: 1280 });

    const silent = await settle(
      s,
      a.key,
      await create(s, a.key, 'seedance-1.5-pro', { prompt: 'quiet', duration: 4, generate_audio: false, resolution: '480p' }),
    );
    const mp4 = await download(s, silent.resultJson.videos[0].url, 'v.mp4');
    expect(mp4.info).toMatchObject({ width: 854, height: 480, hasAudio: false });
    expect(silent.lastFrameUrl).toBeUndefined();
  });

  it('makes two different MP3 tracks for suno-v6', async () => {
    const a = await s.account(1);
    const t = await settle(s, a.key, await create(s, a.key, 'suno-v6', { prompt: 'a sea shanty' }));
    const urls = resultUrls(t);
    expect(urls).toHaveLength(2);
    const [one, two] = await Promise.all(urls.map((u, i) => download(s, u, `t${i}.mp3`)));
    expect(one!.res.headers.get('content-type')).toBe('audio/mpeg');
    expect(one!.info.kind).toBe('audio');
    expect(two!.info.kind).toBe('audio');
    expect(Buffer.from(await (await fetchFile(s, urls[0]!)).arrayBuffer())).not.toEqual(Buffer.from(await (await fetchFile(s, urls[1]!)).arrayBuffer()));
  });

  it('automatic length: charges 30 s, refunds the unused seconds as a partial refund', async () => {
    const a = await s.account(10);
    const id = await create(s, a.key, 'seedance-2.5', { prompt: 'how long?', duration: 'auto', resolution: '480p' });
    const t = await settle(s, a.key, id);
    const seconds = Math.round(t.resultJson.duration);
    expect(seconds).toBeGreaterThanOrEqual(4);
    expect(seconds).toBeLessThan(30);
    const finalMicros = seconds * 125_000;
    expect(await taskEntries(s, id)).toEqual({ charge: -3_750_000, partial_refund: 3_750_000 - finalMicros });
    expect(t).toMatchObject({ refunded: false, creditsConsumed: finalMicros / 1e6, costUsd: (finalMicros / 1e6).toFixed(3) });
    await expectLedgerInvariant(s.services.database);
  });

  it('draft flow: a 480p draft, then its 1080p final by draft_task_id with allowed changes', async () => {
    const a = await s.account(10);
    const b = await s.account(10);
    const draftId = await create(s, a.key, 'seedance-2.5', { prompt: 'a fox', draft: true, duration: 4, aspect_ratio: '16:9' });
    const draft = await settle(s, a.key, draftId);
    expect(draft.costUsd).toBe('0.500');
    expect((await download(s, draft.resultJson.videos[0].url, 'd.mp4')).info).toMatchObject({ width: 854, height: 480 });

    const refused = await s.call('POST', '/api/v1/jobs/createTask', {
      key: a.key,
      body: { model: 'seedance-2.5', input: { draft_task_id: draftId, prompt: 'changed' } },
    });
    expect(refused.body).toMatchObject({ code: 400, error: 'invalid_request_error' });
    const foreign = await s.call('POST', '/api/v1/jobs/createTask', { key: b.key, body: { model: 'seedance-2.5', input: { draft_task_id: draftId } } });
    expect(foreign.body).toMatchObject({ code: 400, error: 'invalid_request_error' });
    expect(foreign.body.msg).toMatch(/not found/);
    const notDraft = await settle(s, a.key, await create(s, a.key, 'seedance-2.5', { prompt: 'plain', duration: 4, resolution: '480p' }));
    const wrong = await s.call('POST', '/api/v1/jobs/createTask', { key: a.key, body: { model: 'seedance-2.5', input: { draft_task_id: notDraft.taskId } } });
    expect(wrong.body.msg).toMatch(/not a draft/);

    const finalId = await create(s, a.key, 'seedance-2.5', { draft_task_id: draftId, output_format: 'mov' });
    const final = await settle(s, a.key, finalId);
    expect(final.costUsd).toBe('2.004');
    const video = await download(s, final.resultJson.videos[0].url, 'final.mov');
    expect(video.info).toMatchObject({ width: 1920, height: 1080 });
    expect(video.res.headers.get('content-type')).toBe('video/quicktime');
  });

  it('after 24 hours: files deleted, links 404, filesExpired true; drafts usable 7 days only', async () => {
    const a = await s.account(10);
    const id = await create(s, a.key, 'seedance-2.5', { prompt: 'old fox', draft: true, duration: 4 });
    const t = await settle(s, a.key, id);
    const [link] = resultUrls(t);
    expect((await fetchFile(s, link!)).status).toBe(200);
    const blobs = await s.services.database.db.selectFrom('files').select('blob_key').where('task_id', '=', id).execute();
    clock.advance(24 * 3_600_000 + 1);
    expect((await fetchFile(s, link!)).status).toBe(404);
    const expired = await eventually(async () => ((await info(s, a.key, id)).filesExpired ? info(s, a.key, id) : null));
    expect(expired).toMatchObject({ state: 'success', filesExpired: true });
    for (const b of blobs) expect(await s.services.files.blobs.size(b.blob_key)).toBeNull();
    // Files are gone, the draft still works as draft_task_id within 7 days...
    expect((await s.call('POST', '/api/v1/jobs/createTask', { key: a.key, body: { model: 'seedance-2.5', input: { draft_task_id: id } } })).status).toBe(200);
    clock.advance(6 * 24 * 3_600_000);
    const late = await s.call('POST', '/api/v1/jobs/createTask', { key: a.key, body: { model: 'seedance-2.5', input: { draft_task_id: id } } });
    expect(late.body).toMatchObject({ code: 400, error: 'invalid_request_error' });
    expect(late.body.msg).toMatch(/last 7 days/);
  });
});
