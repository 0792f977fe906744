import { readdir } from 'node:fs/promises';
import { describe, expect, it, beforeAll, afterAll } from 'vitest';
import { BackendFailure } from '../../src/backends/index.js';
import { createBytePlusBackend } from '../../src/backends/byteplus/index.js';
import { pixelSize } from '../../src/backends/byteplus/input.js';
import { hashOf } from '../media/helpers.js';
import { startBytePlusFake } from '../fakes/byteplus.js';
import { jobOf, notAccepted, pollUntilSettled, rejectionOf, useUpstreamKit } from './helpers.js';

const KEY = 'ark-test-key';

describe('BytePlus ModelArk adapter against a fake ModelArk', () => {
  const kit = useUpstreamKit();
  let fake: Awaited<ReturnType<typeof startBytePlusFake>>;
  beforeAll(async () => {
    fake = await startBytePlusFake(KEY, { video: 'video.mp4', frame: 'frame.png', image: 'image.jpg' });
    fake.media('video.mp4', kit.video, 'video/mp4');
    fake.media('frame.png', kit.frame, 'image/png');
    fake.media('image.jpg', kit.image, 'image/jpeg');
  });
  afterAll(() => fake.close());

  const backend = (model = 'dreamina-seedance-2-0-260128', apiKey = KEY, map?: Record<string, unknown>) =>
    createBytePlusBackend({ name: 'byteplus#1', baseUrl: fake.url, apiKey, upstreamModel: model, http: kit.http, tmpDir: kit.tmpDir, ...(map ? { map } : {}) });
  const lastCreate = () => fake.calls.filter((c) => c.method === 'POST').at(-1)!;

  it('creates a Seedance task with the mapped input, follows it to success and downloads video and last frame', async () => {
    const job = jobOf(
      'seedance-2.0',
      'video',
      {
        prompt: 'a red fox in snow',
        first_frame_url: 'https://files.example/a.png',
        last_frame_url: 'https://files.example/b.png',
        image_urls: ['https://files.example/r1.png'],
        video_urls: ['https://files.example/v.mp4'],
        audio_urls: ['https://files.example/s.mp3'],
        resolution: '720p',
        aspect_ratio: '16:9',
        duration: 5,
        generate_audio: true,
        return_last_frame: true,
        seed: 42,
        web_search: true,
        nsfw_check: true,
        trim_to_duration: false,
      },
      'https://gengate.example/upstream/v1/notify/tok123',
    );
    const b = backend();
    expect(b.idempotentSubmit).toBe(false);
    const ref = await b.submit(job);
    expect(ref).toMatch(/^cgt-/);
    const sent = lastCreate();
    expect(sent.path).toBe('/api/v3/contents/generations/tasks');
    expect(sent.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(sent.json).toEqual({
      model: 'dreamina-seedance-2-0-260128',
      content: [
        { type: 'text', text: 'a red fox in snow' },
        { type: 'image_url', image_url: { url: 'https://files.example/a.png' }, role: 'first_frame' },
        { type: 'image_url', image_url: { url: 'https://files.example/b.png' }, role: 'last_frame' },
        { type: 'image_url', image_url: { url: 'https://files.example/r1.png' }, role: 'reference_image' },
        { type: 'video_url', video_url: { url: 'https://files.example/v.mp4' }, role: 'reference_video' },
        { type: 'audio_url', audio_url: { url: 'https://files.example/s.mp3' }, role: 'reference_audio' },
      ],
      resolution: '720p',
      ratio: '16:9',
      duration: 5,
      seed: 42,
      generate_audio: true,
      return_last_frame: true,
      watermark: false,
      tools: [{ type: 'web_search' }],
      callback_url: 'https://gengate.example/upstream/v1/notify/tok123',
    });
    const states = await pollUntilSettled(b, job, ref);
    expect(states.map((s) => s.state)).toEqual(['queued', 'running', 'done']);
    const out = await b.results(job, ref);
    expect(out.files).toHaveLength(1);
    expect(out.files[0]!.mime).toBe('video/mp4');
    expect(await hashOf(out.files[0]!.path)).toBe(await hashOf(kit.video));
    expect(await hashOf(out.lastFrame!.path)).toBe(await hashOf(kit.frame));
    expect(out.durationSeconds).toBe(2);
  });

  it('a result link that is gone fails the task (generation) and leaves no partial download behind', async () => {
    const b = backend();
    const job = jobOf('seedance-2.0', 'video', { prompt: '[frame-gone] x', return_last_frame: true });
    const ref = await b.submit(job);
    await pollUntilSettled(b, job, ref);
    const e = await rejectionOf(b.results(job, ref));
    expect(e).toBeInstanceOf(BackendFailure);
    expect((e as BackendFailure).kind).toBe('generation');
    expect((e as BackendFailure).message).toMatch(/HTTP 404/);
    expect((await readdir(kit.tmpDir)).filter((f) => f.startsWith(`${job.taskId}-`))).toEqual([]);
  });

  it('sends automatic length as -1, leaves absent switches to the upstream, and applies the route map', async () => {
    const b = backend('seedance-1-5-pro-251215', KEY, { rename: { ratio: 'aspect' }, set: { service_tier: 'flex' }, omit: ['seed'] });
    await b.submit(
      jobOf('seedance-2.5', 'video', { prompt: 'waves', duration: 'auto', aspect_ratio: 'adaptive', seed: 7, camera_fixed: true, watermark: false }),
    );
    const body = lastCreate().json as Record<string, unknown>;
    expect(body).toMatchObject({ duration: -1, aspect: 'adaptive', service_tier: 'flex', camera_fixed: true, watermark: false });
    expect(body).not.toHaveProperty('seed');
    expect(body).not.toHaveProperty('callback_url');
    expect(body).not.toHaveProperty('generate_audio');
  });

  it('maps refusals of the create call: moderation → content, bad parameters → rejected; 429 and 5xx are NotAccepted', async () => {
    const policy = await rejectionOf(backend().submit(jobOf('seedance-2.0', 'video', { prompt: '[policy] x' })));
    expect(policy).toBeInstanceOf(BackendFailure);
    expect((policy as BackendFailure).kind).toBe('content');
    expect((policy as BackendFailure).message).toMatch(/InputTextSensitiveContentDetected/);
    const invalid = await rejectionOf(backend().submit(jobOf('seedance-2.0', 'video', { prompt: '[invalid] x' })));
    expect((invalid as BackendFailure).kind).toBe('rejected');
    const busy = await notAccepted(backend().submit(jobOf('seedance-2.0', 'video', { prompt: '[busy] x' })));
    expect(busy.retryAfterMs).toBe(3000);
    await notAccepted(backend().submit(jobOf('seedance-2.0', 'video', { prompt: '[down] x' })));
  });

  it('a wrong key is refused with 401 and is NotAccepted (the route, not the task, is at fault)', async () => {
    const e = await notAccepted(backend(undefined, 'wrong').submit(jobOf('seedance-2.0', 'video', { prompt: 'x' })));
    expect(e.message).toMatch(/401.*AuthenticationError/);
  });

  it('an accepted create without an id is a plain error (the task may exist upstream)', async () => {
    const e = await rejectionOf(backend().submit(jobOf('seedance-2.0', 'video', { prompt: '[noid] x' })));
    expect(e).not.toBeInstanceOf(BackendFailure);
    expect((e as Error).name).toBe('Error');
  });

  it('maps tasks that fail after acceptance: output moderation → content, internal → unavailable, expired → timeout', async () => {
    const cases: [string, string][] = [
      ['[fail-later]', 'content'],
      ['[broken]', 'unavailable'],
      ['[expire]', 'timeout'],
    ];
    for (const [marker, kind] of cases) {
      const job = jobOf('seedance-2.0', 'video', { prompt: `${marker} x` });
      const b = backend();
      const ref = await b.submit(job);
      const last = (await pollUntilSettled(b, job, ref)).at(-1)!;
      expect(last).toMatchObject({ state: 'failed', kind });
    }
  });

  it('garbage JSON while polling is a transient error, not a failure of the task', async () => {
    const job = jobOf('seedance-2.0', 'video', { prompt: '[garbage] x' });
    const b = backend();
    const ref = await b.submit(job);
    const e = await rejectionOf(b.progress(job, ref));
    expect(e).not.toBeInstanceOf(BackendFailure);
    expect((e as Error).message).toMatch(/unreadable/);
  });

  it('cancel deletes a queued task (cancelled); a running or finished one is not-cancellable and never deleted; no answer is unknown', async () => {
    const b = backend();
    const job = jobOf('seedance-2.0', 'video', { prompt: 'to cancel' });
    const ref = await b.submit(job);
    expect(await b.cancel(job, ref)).toBe('cancelled');
    expect(fake.calls.at(-1)).toMatchObject({ method: 'DELETE', path: `/api/v3/contents/generations/tasks/${ref}` });
    expect(await b.progress(job, ref)).toMatchObject({ state: 'failed', kind: 'unavailable' });
    // Asked again: the task is cancelled already, and no second DELETE is sent.
    expect(await b.cancel(job, ref)).toBe('cancelled');
    expect(fake.calls.filter((c) => c.method === 'DELETE')).toHaveLength(1);

    const running = jobOf('seedance-2.0', 'video', { prompt: 'running' });
    const ref2 = await b.submit(running);
    await b.progress(running, ref2);
    await b.progress(running, ref2);
    fake.tasks.get(ref2)!.polls = -100;
    expect(await b.cancel(running, ref2)).toBe('not-cancellable');
    expect(fake.tasks.get(ref2)!.status).toBe('running');
    // ModelArk's DELETE would remove a finished task's record: it is never sent for one.
    fake.tasks.get(ref2)!.status = 'succeeded';
    expect(await b.cancel(running, ref2)).toBe('not-cancellable');
    expect(fake.calls.filter((c) => c.method === 'DELETE')).toHaveLength(1);
    expect(await b.cancel(jobOf('seedream', 'image', {}), 'image:https://x.example/i.png')).toBe('not-cancellable');
    const gone = createBytePlusBackend({
      name: 'byteplus#2',
      baseUrl: 'http://127.0.0.1:9',
      apiKey: KEY,
      upstreamModel: 'm',
      http: kit.http,
      tmpDir: kit.tmpDir,
    });
    expect(await gone.cancel(job, ref)).toBe('unknown');
  });

  it('Seedream: one synchronous call with size from class and ratio, then the image is downloaded', async () => {
    const b = backend('seedream-4-5-251128');
    const job = jobOf(
      'seedream-pro',
      'image',
      { prompt: 'a lighthouse', resolution: '2K', aspect_ratio: '16:9', image_input: ['https://files.example/p.png'], seed: 3, output_format: 'png' },
      'https://gg.example/hook',
    );
    const ref = await b.submit(job);
    expect(lastCreate().path).toBe('/api/v3/images/generations');
    expect(lastCreate().json).toEqual({
      model: 'seedream-4-5-251128',
      prompt: 'a lighthouse',
      image: 'https://files.example/p.png',
      size: '2736x1536',
      seed: 3,
      output_format: 'png',
      sequential_image_generation: 'disabled',
      response_format: 'url',
      watermark: false,
    });
    expect(await b.progress(job, ref)).toEqual({ state: 'done' });
    const out = await b.results(job, ref);
    expect(await hashOf(out.files[0]!.path)).toBe(await hashOf(kit.image));
    const broken = await rejectionOf(b.submit(jobOf('seedream-pro', 'image', { prompt: '[broken] x' })));
    expect((broken as BackendFailure).kind).toBe('content');
  });

  it('pixel sizes keep about the class’s pixel count', () => {
    expect(pixelSize('2K', '1:1')).toBe('2048x2048');
    expect(pixelSize('1K', '9:16')).toBe('768x1360');
    expect(pixelSize('4K', '21:9')).toMatch(/^\d+x\d+$/);
  });
});
