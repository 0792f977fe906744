import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BackendFailure } from '../../src/backends/index.js';
import { createReplicateBackend } from '../../src/backends/replicate/index.js';
import { hashOf } from '../media/helpers.js';
import { startReplicateFake } from '../fakes/replicate.js';
import { jobOf, notAccepted, pollUntilSettled, rejectionOf, useUpstreamKit } from './helpers.js';

const TOKEN = 'r8_testtoken';

describe('Replicate adapter against a fake Replicate', () => {
  const kit = useUpstreamKit();
  let fake: Awaited<ReturnType<typeof startReplicateFake>>;
  beforeAll(async () => {
    fake = await startReplicateFake(TOKEN, (model, base) =>
      model.includes('seedance')
        ? `${base}/media/video.mp4`
        : model.includes('music')
          ? [`${base}/media/t1.mp3`, `${base}/media/t2.mp3`]
          : [`${base}/media/image.jpg`],
    );
    fake.media('video.mp4', kit.video, 'video/mp4');
    fake.media('image.jpg', kit.image, 'image/jpeg');
    fake.media('t1.mp3', kit.tracks[0]!, 'audio/mpeg');
    fake.media('t2.mp3', kit.tracks[1]!, 'audio/mpeg');
  });
  afterAll(() => fake.close());

  const backend = (model = 'bytedance/seedance-1-pro', token = TOKEN, map?: Record<string, unknown>) =>
    createReplicateBackend({
      name: 'replicate#1',
      baseUrl: fake.url,
      apiKey: token,
      upstreamModel: model,
      http: kit.http,
      tmpDir: kit.tmpDir,
      ...(map ? { map } : {}),
    });
  const creates = () => fake.calls.filter((c) => c.method === 'POST' && c.path.endsWith('/predictions'));

  it('creates a prediction on the model with mapped input, webhook and deadline; follows it; downloads the video', async () => {
    const b = backend();
    expect(b.idempotentSubmit).toBe(false);
    const job = jobOf(
      'seedance-1.5-pro',
      'video',
      {
        prompt: 'a lantern drifting',
        first_frame_url: 'https://files.example/f.png',
        last_frame_url: 'https://files.example/l.png',
        resolution: '720p',
        aspect_ratio: '9:16',
        duration: 6,
        camera_fixed: false,
        seed: 11,
        generate_audio: true,
        nsfw_check: true,
      },
      'https://gengate.example/upstream/v1/notify/zzz',
    );
    const ref = await b.submit(job);
    const sent = creates().at(-1)!;
    expect(sent.path).toBe('/v1/models/bytedance/seedance-1-pro/predictions');
    expect(sent.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(sent.headers['cancel-after']).toBe('20m');
    expect(sent.json).toEqual({
      input: {
        prompt: 'a lantern drifting',
        image: 'https://files.example/f.png',
        last_frame_image: 'https://files.example/l.png',
        resolution: '720p',
        aspect_ratio: '9:16',
        duration: 6,
        camera_fixed: false,
        seed: 11,
        generate_audio: true,
      },
      webhook: 'https://gengate.example/upstream/v1/notify/zzz',
      webhook_events_filter: ['completed'],
    });
    const states = await pollUntilSettled(b, job, ref);
    expect(states.map((s) => s.state)).toEqual(['queued', 'running', 'done']);
    const out = await b.results(job, ref);
    expect(await hashOf(out.files[0]!.path)).toBe(await hashOf(kit.video));
  });

  it('a pinned version goes to /v1/predictions; image output lists are read; the map renames', async () => {
    const version = 'a'.repeat(64);
    const b = backend(`google/nano-banana:${version}`, TOKEN, { rename: { resolution: 'size' } });
    const job = jobOf('nano-banana-2', 'image', {
      prompt: 'a cat',
      image_input: ['https://files.example/c.png'],
      resolution: '2K',
      aspect_ratio: '1:1',
      output_format: 'jpeg',
    });
    const ref = await b.submit(job);
    const sent = creates().at(-1)!;
    expect(sent.path).toBe('/v1/predictions');
    expect(sent.json).toEqual({
      version,
      input: { prompt: 'a cat', image_input: ['https://files.example/c.png'], size: '2K', aspect_ratio: '1:1', output_format: 'jpeg' },
    });
    expect(sent.json).not.toHaveProperty('webhook');
    await pollUntilSettled(b, job, ref);
    expect(await hashOf((await b.results(job, ref)).files[0]!.path)).toBe(await hashOf(kit.image));
  });

  it('music: both tracks of the output are downloaded', async () => {
    const b = backend('someone/music-model');
    const job = jobOf('suno-v6', 'music', { prompt: 'a sea shanty' });
    const ref = await b.submit(job);
    await pollUntilSettled(b, job, ref);
    const out = await b.results(job, ref);
    expect(out.files).toHaveLength(2);
    expect(await hashOf(out.files[1]!.path)).toBe(await hashOf(kit.tracks[1]!));
  });

  it('refusals at create: 422 → rejected naming the field; 402, 429 (Retry-After), 503 and a wrong token are NotAccepted', async () => {
    const invalid = await rejectionOf(backend().submit(jobOf('x', 'video', { prompt: '[invalid]', duration: 7 })));
    expect(invalid).toBeInstanceOf(BackendFailure);
    expect((invalid as BackendFailure).kind).toBe('rejected');
    expect((invalid as BackendFailure).message).toMatch(/input\.duration: duration must be one of the following: 5, 10/);
    expect((await notAccepted(backend().submit(jobOf('x', 'video', { prompt: '[credit]' })))).message).toMatch(/402.*Insufficient credit/);
    expect((await notAccepted(backend().submit(jobOf('x', 'video', { prompt: '[busy]' })))).retryAfterMs).toBe(4000);
    await notAccepted(backend().submit(jobOf('x', 'video', { prompt: '[down]' })));
    expect((await notAccepted(backend(undefined, 'bad').submit(jobOf('x', 'video', { prompt: 'x' })))).message).toMatch(/401/);
  });

  it('after acceptance: flagged → content, OOM → generation, aborted → timeout, files removed → generation', async () => {
    for (const [marker, kind] of [
      ['[policy]', 'content'],
      ['[fail-later]', 'generation'],
      ['[aborted]', 'timeout'],
    ] as const) {
      const b = backend();
      const job = jobOf('x', 'video', { prompt: `${marker} go` });
      const ref = await b.submit(job);
      expect((await pollUntilSettled(b, job, ref)).at(-1)).toMatchObject({ state: 'failed', kind });
    }
    const b = backend();
    const job = jobOf('x', 'video', { prompt: '[removed] go' });
    const ref = await b.submit(job);
    await pollUntilSettled(b, job, ref);
    expect(((await rejectionOf(b.results(job, ref))) as BackendFailure).kind).toBe('generation');
  });

  it('garbage while polling is transient; cancel posts to the prediction’s cancel and the prediction ends canceled', async () => {
    const b = backend();
    const garbage = jobOf('x', 'video', { prompt: '[garbage]' });
    const ref = await b.submit(garbage);
    expect(await rejectionOf(b.progress(garbage, ref))).not.toBeInstanceOf(BackendFailure);

    const job = jobOf('x', 'video', { prompt: 'long' });
    const ref2 = await b.submit(job);
    expect(await b.cancel(job, ref2)).toBe('cancelled');
    expect(fake.calls.at(-1)).toMatchObject({ method: 'POST', path: `/v1/predictions/${ref2}/cancel` });
    expect(await b.progress(job, ref2)).toMatchObject({ state: 'failed', kind: 'unavailable' });
    // Asked again, the prediction is still canceled: the same answer.
    expect(await b.cancel(job, ref2)).toBe('cancelled');
    // A prediction that ended first is not-cancellable; an unknown one (404) gives no clear answer.
    const done = jobOf('x', 'video', { prompt: 'done first' });
    const ref3 = await b.submit(done);
    fake.predictions.get(ref3)!.view.status = 'succeeded';
    expect(await b.cancel(done, ref3)).toBe('not-cancellable');
    expect(await b.cancel(done, 'no-such-prediction')).toBe('unknown');
  });
});
