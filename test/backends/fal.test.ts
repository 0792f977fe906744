import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BackendFailure } from '../../src/backends/index.js';
import { appOf, createFalBackend } from '../../src/backends/fal/index.js';
import { hashOf } from '../media/helpers.js';
import { startFalFake } from '../fakes/fal.js';
import { jobOf, notAccepted, pollUntilSettled, rejectionOf, useUpstreamKit } from './helpers.js';

const KEY = 'fal-key-123:secret';
const VIDEO_MODEL = 'fal-ai/bytedance/seedance/v1/pro/image-to-video';

describe('fal adapter against a fake fal queue', () => {
  const kit = useUpstreamKit();
  let fake: Awaited<ReturnType<typeof startFalFake>>;
  beforeAll(async () => {
    fake = await startFalFake(KEY, (model, base) =>
      model.includes('video')
        ? { video: { url: `${base}/media/video.mp4`, content_type: 'video/mp4', file_name: 'output.mp4', file_size: 1000 }, seed: 1 }
        : { images: [{ url: `${base}/media/image.jpg`, content_type: 'image/jpeg', width: 64, height: 48 }], description: '' },
    );
    fake.media('video.mp4', kit.video, 'video/mp4');
    fake.media('image.jpg', kit.image, 'image/jpeg');
  });
  afterAll(() => fake.close());

  const backend = (model = VIDEO_MODEL, apiKey = KEY, map?: Record<string, unknown>) =>
    createFalBackend({ name: 'fal#1', baseUrl: fake.url, apiKey, upstreamModel: model, http: kit.http, tmpDir: kit.tmpDir, ...(map ? { map } : {}) });
  const submits = () => fake.calls.filter((c) => c.method === 'POST');

  it('submits the mapped input with the webhook, polls IN_QUEUE → IN_PROGRESS → COMPLETED, and downloads the video', async () => {
    const b = backend();
    expect(b.idempotentSubmit).toBe(false);
    const job = jobOf(
      'seedance-1.5-pro',
      'video',
      {
        prompt: 'a kite over dunes',
        first_frame_url: 'https://files.example/f.png',
        last_frame_url: 'https://files.example/l.png',
        resolution: '1080p',
        aspect_ratio: '16:9',
        duration: 5,
        generate_audio: false,
        camera_fixed: true,
        seed: 9,
        nsfw_check: false,
      },
      'https://gengate.example/upstream/v1/notify/abc',
    );
    const ref = await b.submit(job);
    const sent = submits().at(-1)!;
    expect(sent.path).toBe(`/${VIDEO_MODEL}`);
    expect(sent.query.get('fal_webhook')).toBe('https://gengate.example/upstream/v1/notify/abc');
    expect(sent.headers.authorization).toBe(`Key ${KEY}`);
    expect(sent.json).toEqual({
      prompt: 'a kite over dunes',
      image_url: 'https://files.example/f.png',
      end_image_url: 'https://files.example/l.png',
      resolution: '1080p',
      aspect_ratio: '16:9',
      duration: '5',
      generate_audio: false,
      camera_fixed: true,
      seed: 9,
    });
    expect(ref).toMatch(/^fal-ai\/bytedance\|[0-9a-f-]{36}$/);
    const states = await pollUntilSettled(b, job, ref);
    expect(states.map((s) => s.state)).toEqual(['queued', 'running', 'done']);
    expect(fake.calls.filter((c) => c.path.endsWith('/status')).at(-1)!.path).toBe(`/fal-ai/bytedance/requests/${ref.split('|')[1]}/status`);
    const out = await b.results(job, ref);
    expect(await hashOf(out.files[0]!.path)).toBe(await hashOf(kit.video));
    expect(out.files[0]!.mime).toBe('video/mp4');
  });

  it('image models: photos become image_urls, one image is asked for, no webhook without a public URL', async () => {
    const b = backend('fal-ai/nano-banana/edit', KEY, { rename: { resolution: 'image_size' } });
    const job = jobOf('google/nano-banana-edit', 'image', {
      prompt: 'make it blue',
      image_input: ['https://files.example/1.png', 'https://files.example/2.png'],
      aspect_ratio: 'auto',
      output_format: 'png',
      resolution: '1K',
    });
    const ref = await b.submit(job);
    const sent = submits().at(-1)!;
    expect(sent.query.has('fal_webhook')).toBe(false);
    expect(sent.json).toEqual({
      prompt: 'make it blue',
      image_urls: ['https://files.example/1.png', 'https://files.example/2.png'],
      image_size: '1K',
      aspect_ratio: 'auto',
      output_format: 'png',
      num_images: 1,
    });
    await pollUntilSettled(b, job, ref);
    const out = await b.results(job, ref);
    expect(await hashOf(out.files[0]!.path)).toBe(await hashOf(kit.image));
  });

  it('refusals at submit: 422 → rejected naming the field; 429 (Retry-After), 503 and a wrong key are NotAccepted', async () => {
    const invalid = await rejectionOf(backend().submit(jobOf('x', 'video', { prompt: '[invalid]', duration: 7 })));
    expect(invalid).toBeInstanceOf(BackendFailure);
    expect((invalid as BackendFailure).kind).toBe('rejected');
    expect((invalid as BackendFailure).message).toMatch(/duration: Input should be '5' or '10'/);
    expect((await notAccepted(backend().submit(jobOf('x', 'video', { prompt: '[busy]' })))).retryAfterMs).toBe(2000);
    expect((await notAccepted(backend().submit(jobOf('x', 'video', { prompt: '[down]' })))).message).toMatch(/503/);
    expect((await notAccepted(backend(VIDEO_MODEL, 'nope').submit(jobOf('x', 'video', { prompt: 'x' })))).message).toMatch(/401/);
  });

  it('failures after acceptance: content policy → content, request_timeout → timeout, model error → generation', async () => {
    for (const [marker, kind] of [
      ['[policy]', 'content'],
      ['[timeout]', 'timeout'],
      ['[fail-later]', 'generation'],
    ] as const) {
      const b = backend();
      const job = jobOf('x', 'video', { prompt: `${marker} go` });
      const ref = await b.submit(job);
      await pollUntilSettled(b, job, ref);
      const e = await rejectionOf(b.results(job, ref));
      expect(e).toBeInstanceOf(BackendFailure);
      expect((e as BackendFailure).kind).toBe(kind);
    }
  });

  it('a proxy page instead of a result, and garbage status answers, are transient errors', async () => {
    const b = backend();
    const html = jobOf('x', 'video', { prompt: '[html] go' });
    const ref = await b.submit(html);
    await pollUntilSettled(b, html, ref);
    const e = await rejectionOf(b.results(html, ref));
    expect(e).not.toBeInstanceOf(BackendFailure);
    expect((e as Error).message).toMatch(/HTTP 502/);
    const garbage = jobOf('x', 'video', { prompt: '[garbage] go' });
    const ref2 = await b.submit(garbage);
    const e2 = await rejectionOf(b.progress(garbage, ref2));
    expect(e2).not.toBeInstanceOf(BackendFailure);
  });

  it('cancel sends PUT …/cancel under the app path: 202 is cancelled, 400 ALREADY_COMPLETED not-cancellable, 404 unknown', async () => {
    const b = backend();
    const job = jobOf('x', 'video', { prompt: 'long' });
    const ref = await b.submit(job);
    expect(await b.cancel(job, ref)).toBe('cancelled');
    const id = ref.split('|')[1]!;
    expect(fake.calls.at(-1)).toMatchObject({ method: 'PUT', path: `/fal-ai/bytedance/requests/${id}/cancel` });
    expect(fake.requests.get(id)!.cancelled).toBe(true);
    // 400 ALREADY_COMPLETED: too late; an unknown request (404) gives no clear answer.
    fake.requests.get(id)!.done = true;
    expect(await b.cancel(job, ref)).toBe('not-cancellable');
    expect(await b.cancel(job, 'fal-ai/bytedance|no-such-request')).toBe('unknown');
  });

  it('owner/app of model ids', () => {
    expect(appOf('fal-ai/flux/dev')).toBe('fal-ai/flux');
    expect(appOf('fal-ai/nano-banana')).toBe('fal-ai/nano-banana');
  });
});
