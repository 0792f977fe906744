import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BackendFailure, type BackendJob } from '../../src/backends/index.js';
import { KieBackend } from '../../src/backends/kie/index.js';
import { NotAccepted } from '../../src/backends/upstream/index.js';
import { KIE_ALIASES } from '../../src/catalog/index.js';
import { RouteHealth } from '../../src/engine/index.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { startKieFake } from '../fakes/kie.js';
import { upload } from '../files/support.js';
import { hashOf } from '../media/helpers.js';
import { jobOf, pollUntilSettled, rejectionOf, useUpstreamKit } from './helpers.js';

const P = 'https://photos.example.com/a.png';
const Q = 'https://photos.example.com/b.png';
const V = 'https://clips.example.com/c.mp4';
const A = 'https://clips.example.com/d.mp3';

/**
 * Each GenGate model with a kie.ai id, the input the engine hands over (and, where it matters, the
 * body the client sent), and the createTask body kie.ai must get: the names of KIE.md §2, reversed.
 * Written out by hand, not derived from src/catalog/kie.ts, so a wrong table fails here.
 */
const CASES: {
  model: string;
  input: Record<string, unknown>;
  sent?: Record<string, unknown>;
  kie: string;
  expect: Record<string, unknown>;
  absent?: string[];
}[] = [
  {
    model: 'google/nano-banana',
    input: { prompt: 'p', aspect_ratio: '16:9', output_format: 'jpeg', nsfw_check: true },
    kie: 'google/nano-banana',
    expect: { prompt: 'p', image_size: '16:9', output_format: 'jpg', nsfw_checker: true },
    absent: ['aspect_ratio', 'nsfw_check'],
  },
  {
    model: 'google/nano-banana-edit',
    input: { prompt: 'p', image_input: [P], aspect_ratio: '1:1' },
    kie: 'google/nano-banana-edit',
    expect: { image_urls: [P], image_size: '1:1' },
    absent: ['image_input'],
  },
  {
    model: 'nano-banana-2',
    input: { prompt: 'p', image_input: [P], resolution: '2K' },
    sent: { model: 'nano-banana-2', input: { prompt: 'p', google_search: true } },
    kie: 'nano-banana-2',
    expect: { image_urls: [P], resolution: '2K', google_search: true },
  },
  { model: 'nano-banana-pro', input: { prompt: 'p', nsfw_check: false }, kie: 'nano-banana-pro', expect: { prompt: 'p', nsfw_checker: false } },
  // gpt-image-2-* are kie.ai market models of their own (decision 3310): no row of the table.
  // Seedream 5 takes quality, not resolution: the map is reversed (decision 3310).
  {
    model: 'seedream-pro',
    input: { prompt: 'p', resolution: '2K' },
    kie: 'seedream/5-pro-text-to-image',
    expect: { quality: 'basic' },
    absent: ['resolution'],
  },
  { model: 'seedream-pro', input: { prompt: 'p', resolution: '4K' }, kie: 'seedream/5-pro-text-to-image', expect: { quality: 'high' }, absent: ['resolution'] },
  {
    model: 'seedream-pro',
    input: { prompt: 'p', image_input: [P] },
    kie: 'seedream/5-pro-image-to-image',
    expect: { image_urls: [P] },
    absent: ['image_input'],
  },
  { model: 'seedream-flash', input: { prompt: 'p' }, kie: 'seedream/5-lite-text-to-image', expect: { prompt: 'p' } },
  { model: 'seedream-flash', input: { prompt: 'p', image_input: [P] }, kie: 'seedream/5-lite-image-to-image', expect: { image_urls: [P] } },
  {
    model: 'seedance-2.5',
    input: { prompt: 'p', image_urls: [P], video_urls: [V], audio_urls: [A], duration: 5 },
    kie: 'bytedance/seedance-2-5',
    expect: { reference_image_urls: [P], reference_video_urls: [V], reference_audio_urls: [A], duration: 5 },
    absent: ['image_urls', 'video_urls', 'audio_urls'],
  },
  { model: 'seedance-2.0', input: { prompt: 'p', image_urls: [P] }, kie: 'bytedance/seedance-2', expect: { reference_image_urls: [P] } },
  { model: 'seedance-2.0-fast', input: { prompt: 'p', video_urls: [V] }, kie: 'bytedance/seedance-2-fast', expect: { reference_video_urls: [V] } },
  { model: 'seedance-2.0-mini', input: { prompt: 'p', image_urls: [P] }, kie: 'bytedance/seedance-2-mini', expect: { reference_image_urls: [P] } },
  {
    model: 'seedance-1.5-pro',
    input: { prompt: 'p', first_frame_url: P, last_frame_url: Q, camera_fixed: true },
    kie: 'bytedance/seedance-1.5-pro',
    expect: { input_urls: [P, Q], fixed_lens: true },
    absent: ['first_frame_url', 'last_frame_url', 'camera_fixed'],
  },
  {
    model: 'grok-imagine',
    input: { prompt: 'p' },
    sent: { model: 'grok-imagine/text-to-video', input: { prompt: 'p', mode: 'spicy' } },
    kie: 'grok-imagine/text-to-video',
    expect: { prompt: 'p', mode: 'spicy' },
  },
  {
    model: 'grok-imagine',
    input: { prompt: 'p', first_frame_url: P },
    kie: 'grok-imagine/image-to-video',
    expect: { image_urls: [P] },
    absent: ['first_frame_url'],
  },
  { model: 'grok-imagine-1.5', input: { prompt: 'p', first_frame_url: P }, kie: 'grok-imagine-video-1-5-preview', expect: { image_urls: [P] } },
  {
    model: 'wan-2.7',
    input: { prompt: 'p', aspect_ratio: '16:9' },
    sent: { model: 'wan/2-7-text-to-video', input: { prompt: 'p', prompt_extend: true, watermark: false } },
    kie: 'wan/2-7-text-to-video',
    expect: { ratio: '16:9', prompt_extend: true, watermark: false },
    absent: ['aspect_ratio'],
  },
  {
    model: 'wan-2.7',
    input: { prompt: 'p', first_frame_url: P, aspect_ratio: '9:16' },
    kie: 'wan/2-7-image-to-video',
    expect: { image_urls: [P], ratio: '9:16' },
  },
];

describe('kie adapter', () => {
  const kit = useUpstreamKit();
  let s: TestServer;
  let kie: Awaited<ReturnType<typeof startKieFake>>;
  let refusing: Awaited<ReturnType<typeof startKieFake>>;
  const backend = (over: Partial<ConstructorParameters<typeof KieBackend>[0]> = {}) =>
    new KieBackend({
      name: 'kie:test#1',
      baseUrl: kie.url,
      uploadUrl: kie.uploadUrl,
      apiKey: 'kie-key',
      upstreamModel: 'unused',
      http: kit.http,
      tmpDir: kit.tmpDir,
      files: s.services.files,
      ...over,
    });
  const withSent = (job: BackendJob, sent?: Record<string, unknown>): BackendJob => (sent ? { ...job, sent } : job);

  beforeAll(async () => {
    s = await startServer('sqlite');
    kie = await startKieFake('kie-key');
    for (const [name, file, mime] of [
      ['image.jpg', kit.image, 'image/jpeg'],
      ['video.mp4', kit.video, 'video/mp4'],
      ['track-1.mp3', kit.tracks[0]!, 'audio/mpeg'],
      ['track-2.mp3', kit.tracks[1]!, 'audio/mpeg'],
    ] as const)
      kie.media(name, file, mime);
    refusing = await startKieFake('kie-refusing', { refuseDirect: true });
    refusing.media('image.jpg', kit.image, 'image/jpeg');
  });
  afterAll(async () => {
    await s?.close();
    await kie?.close();
    await refusing?.close();
  });

  it('the cases cover every kie.ai id of the shared table', () => {
    expect(new Set(CASES.map((c) => c.kie))).toEqual(new Set(KIE_ALIASES.map((r) => r.name)));
  });

  it.each(CASES)('$model → $kie: the createTask body carries kie.ai names', async (c) => {
    const before = kie.creates().length;
    const job = withSent(jobOf(c.model, 'image', c.input), c.sent);
    const ref = await backend({ upstreamModel: c.model }).submit(job);
    expect(ref).toMatch(/^task_/);
    const call = kie.creates()[before]!;
    const body = call.json as { model: string; input: Record<string, unknown>; callBackUrl?: string };
    expect(call.headers.authorization).toBe('Bearer kie-key');
    expect(body.model).toBe(c.kie);
    expect(body.input).toMatchObject(c.expect);
    for (const gone of c.absent ?? []) expect(body.input, gone).not.toHaveProperty(gone);
    expect(body).not.toHaveProperty('callBackUrl');
  });

  it("a route's own kie.ai id wins; an id the table does not know gets GenGate's names; callBackUrl is the notify address", async () => {
    await backend({ upstreamModel: 'seedream/5-pro-image-to-image' }).submit(jobOf('seedream-pro', 'image', { prompt: 'p', image_input: [P] }));
    expect(kie.creates().at(-1)!.json).toMatchObject({ model: 'seedream/5-pro-image-to-image', input: { image_urls: [P] } });
    await backend({ upstreamModel: 'kling/v2-master' }).submit(
      jobOf('wan-2.7', 'video', { prompt: 'p', aspect_ratio: '16:9' }, 'https://gg.example/upstream/v1/notify/t'),
    );
    expect(kie.creates().at(-1)!.json).toEqual({
      model: 'kling/v2-master',
      input: { prompt: 'p', aspect_ratio: '16:9' },
      callBackUrl: 'https://gg.example/upstream/v1/notify/t',
    });
  });

  it("uploads GenGate's own photo to kie.ai's upload host first and sends its downloadUrl (once per task)", async () => {
    const { key } = await s.account(1);
    const up = await upload(s, key, kit.frame, 'frame.png');
    expect(up.status, JSON.stringify(up.body)).toBe(200);
    const link = up.body.data.url as string;
    const b = backend({ upstreamModel: 'google/nano-banana-edit' });
    const job = jobOf('google/nano-banana-edit', 'image', { prompt: 'p', image_input: [link, P] });
    await b.submit(job);
    expect(kie.uploads).toHaveLength(1);
    expect(kie.uploads[0]).toMatchObject({ fileName: 'frame.png', uploadPath: 'gengate' });
    expect(kie.uploadCalls[0]!.headers.authorization).toBe('Bearer kie-key');
    expect((kie.creates().at(-1)!.json as { input: Record<string, unknown> }).input.image_urls).toEqual([kie.uploads[0]!.url, P]);
    await b.submit(job);
    expect(kie.uploads).toHaveLength(1);
  });

  it("maps kie.ai's create answers: refusals fail the task, unusable routes are NotAccepted, a lost answer is unclear", async () => {
    const b = backend();
    const refused = await rejectionOf(b.submit(jobOf('nano-banana-pro', 'image', { prompt: '[invalid] p' })));
    expect(refused).toBeInstanceOf(BackendFailure);
    expect((refused as BackendFailure).kind).toBe('rejected');
    expect((refused as Error).message).toContain('duration must be one of');
    for (const prompt of ['[busy] p', '[down] p'])
      expect(await rejectionOf(b.submit(jobOf('nano-banana-pro', 'image', { prompt })))).toBeInstanceOf(NotAccepted);
    expect(await rejectionOf(backend({ apiKey: 'wrong' }).submit(jobOf('nano-banana-pro', 'image', { prompt: 'p' })))).toBeInstanceOf(NotAccepted);
    kie.setCredit(0);
    const broke = await rejectionOf(b.submit(jobOf('nano-banana-pro', 'image', { prompt: 'p' })));
    kie.setCredit(1000);
    expect(broke).toBeInstanceOf(NotAccepted);
    expect((broke as Error).message).toContain('402');
    const lost = await rejectionOf(b.submit(jobOf('nano-banana-pro', 'image', { prompt: '[lost] p' })));
    expect(lost).not.toBeInstanceOf(NotAccepted);
    expect(lost).not.toBeInstanceOf(BackendFailure);
    expect((lost as Error).message).toContain('not created twice');
    const closed = await rejectionOf(backend({ baseUrl: 'http://127.0.0.1:9' }).submit(jobOf('nano-banana-pro', 'image', { prompt: 'p' })));
    expect(closed).toBeInstanceOf(NotAccepted);
  });

  it('follows a task through recordInfo and re-downloads its result; failures map to the failure table', async () => {
    const b = backend();
    const job = jobOf('nano-banana-pro', 'image', { prompt: 'p' });
    const ref = await b.submit(job);
    const seen = await pollUntilSettled(b, job, ref);
    expect(seen.map((x) => x.state)).toEqual(['queued', 'running', 'done']);
    const out = await b.results(job, ref);
    expect(out.files).toHaveLength(1);
    expect(await hashOf(out.files[0]!.path)).toBe(await hashOf(kit.image));

    const policy = jobOf('nano-banana-pro', 'image', { prompt: '[policy] p' });
    expect((await pollUntilSettled(b, policy, await b.submit(policy))).at(-1)).toMatchObject({ state: 'failed', kind: 'content' });
    const fail = jobOf('nano-banana-pro', 'image', { prompt: '[fail] p' });
    expect((await pollUntilSettled(b, fail, await b.submit(fail))).at(-1)).toMatchObject({
      state: 'failed',
      kind: 'generation',
      message: 'kie.ai: Generation failed',
    });
    const gone = await rejectionOf(b.progress(job, 'task_unknown'));
    expect(gone).toBeInstanceOf(BackendFailure);
    expect((gone as BackendFailure).kind).toBe('unavailable');
  });

  it('asks common/download-url for a fresh link when the direct download is refused', async () => {
    const b = backend({ baseUrl: refusing.url, uploadUrl: refusing.uploadUrl, apiKey: 'kie-refusing' });
    const job = jobOf('nano-banana-pro', 'image', { prompt: 'p' });
    const ref = await b.submit(job);
    await pollUntilSettled(b, job, ref);
    const out = await b.results(job, ref);
    expect(await hashOf(out.files[0]!.path)).toBe(await hashOf(kit.image));
    expect(refusing.calls.filter((c) => c.path === '/api/v1/common/download-url')).toHaveLength(1);
  });

  it("runs suno-v6 through kie.ai's Suno endpoints with kie.ai's names and downloads both tracks", async () => {
    const b = backend();
    const job = jobOf(
      'suno-v6',
      'music',
      { prompt: 'la la', custom_mode: true, instrumental: false, version: 'v4.5-plus', title: 'T', style: 'jazz', vocal_gender: 'female', style_weight: 0.5 },
      'https://gg.example/upstream/v1/notify/s',
    );
    const ref = await b.submit(job);
    expect(kie.calls.at(-1)!.path).toBe('/api/v1/generate');
    expect(kie.calls.at(-1)!.json).toEqual({
      prompt: 'la la',
      customMode: true,
      instrumental: false,
      model: 'V4_5PLUS',
      title: 'T',
      style: 'jazz',
      vocalGender: 'f',
      styleWeight: 0.5,
      callBackUrl: 'https://gg.example/upstream/v1/notify/s',
    });
    const seen = await pollUntilSettled(b, job, ref);
    expect(seen.map((x) => x.state)).toEqual(['queued', 'running', 'running', 'done']);
    const out = await b.results(job, ref);
    expect(await Promise.all(out.files.map((f) => hashOf(f.path)))).toEqual(await Promise.all(kit.tracks.map((t) => hashOf(t))));
    // kie.ai's Suno API needs a callback address (issue 36): the adapter tells the engine so, for Suno jobs only.
    expect(b.needsCallback(job)).toBe(true);
    expect(b.needsCallback(jobOf('nano-banana-pro', 'image', { prompt: 'p' }))).toBe(false);
    const bad = jobOf('suno-v6', 'music', { prompt: '[sensitive] la' }, 'https://gg.example/upstream/v1/notify/t');
    expect((await pollUntilSettled(b, bad, await b.submit(bad))).at(-1)).toMatchObject({ state: 'failed', kind: 'content' });
  });

  it('cannot cancel: kie.ai documents no cancel endpoint', async () => {
    const b = backend();
    const job = jobOf('nano-banana-pro', 'image', { prompt: 'p' });
    expect(await b.cancel(job, await b.submit(job))).toBe('not-cancellable');
  });

  it("reads the account's credit: below min_credit the route names the reason; without a minimum it is only shown", async () => {
    const low = await startKieFake('kie-low');
    try {
      low.setCredit(5);
      const guarded = backend({ baseUrl: low.url, apiKey: 'kie-low', minCredit: 10 });
      expect(await guarded.account.check()).toBe("kie.ai credit 5 is below the route's min_credit 10");
      expect(guarded.account.reading()).toMatchObject({ credit: 5, minCredit: 10, low: true });
      const shown = backend({ baseUrl: low.url, apiKey: 'kie-low' });
      expect(await shown.account.check()).toBeNull();
      expect(shown.account.reading()).toMatchObject({ credit: 5, minCredit: null, low: false });
      expect(low.calls.filter((c) => c.path === '/api/v1/chat/credit')).toHaveLength(1);
      // The engine skips the route on every submit but warns once.
      const health = new RouteHealth({ failures: 3, cooldownMs: 1000 }, { now: () => Date.now() }, new Map([['kie:low#1', guarded]]));
      const ref = { name: 'kie:low#1', index: 0, route: { backend: 'kie' } };
      const warned: string[] = [];
      for (let i = 0; i < 3; i++) expect(await health.accountSkip(ref, guarded, (why) => warned.push(why))).toContain('below');
      expect(warned).toHaveLength(1);
    } finally {
      await low.close();
    }
  });
});
