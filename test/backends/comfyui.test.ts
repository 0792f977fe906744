import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BackendFailure, type Backend } from '../../src/backends/index.js';
import { createComfyBackend } from '../../src/backends/comfyui/index.js';
import { BACKEND_KINDS_BUILT } from '../../src/backends/kinds.js';
import { buildRouteBackends } from '../../src/backends/registry.js';
import { buildCatalog, type Catalog } from '../../src/catalog/index.js';
import { ConfigError } from '../../src/config.js';
import type { Files } from '../../src/files/index.js';
import { startComfyFake } from '../fakes/comfyui.js';
import { jobOf, notAccepted, pollUntilSettled, rejectionOf, useUpstreamKit } from './helpers.js';

const dir = mkdtempSync(path.join(tmpdir(), 'gengate-comfyui-unit-'));
const IMAGE_WORKFLOW = path.resolve('docs/comfyui/text-to-image.json');
const VIDEO_WORKFLOW = path.resolve('docs/comfyui/image-to-video.json');
const noFiles = { linkId: () => null } as unknown as Files;

function workflowFile(name: string, graph: unknown): string {
  const file = path.join(dir, name);
  writeFileSync(file, JSON.stringify(graph));
  return file;
}

/** Builds the route backends of a catalog file body the way `gengate serve` does (ConfigError on a mistake). */
function build(models: Record<string, unknown>, http: unknown = {}): Map<string, Backend> {
  const catalog: Catalog = buildCatalog({ models }, `GENGATE_CATALOG ${dir}/catalog.json`);
  return buildRouteBackends(
    catalog,
    { secrets: {}, http: http as never, files: noFiles, tmpDir: dir, kinds: BACKEND_KINDS_BUILT, baseDir: dir },
    `GENGATE_CATALOG ${dir}/catalog.json`,
  );
}

function configError(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return (e as Error).message;
  }
  throw new Error('expected a ConfigError');
}

const node = (class_type: string, inputs: Record<string, unknown>) => ({ class_type, inputs });

describe('comfyui routes and workflows are checked at start', () => {
  it('the shipped example workflows load for an image and a video model', () => {
    const backends = build({
      'google/nano-banana': { routes: [{ backend: 'comfyui', servers: ['http://gpu-1:8188'], workflow: IMAGE_WORKFLOW }] },
      'wan-2.7': { routes: [{ backend: 'comfyui', servers: ['http://gpu-1:8188', 'http://gpu-2:8188'], workflow: VIDEO_WORKFLOW, fps: 16 }] },
    });
    expect([...backends.keys()]).toEqual(['comfyui:google/nano-banana#1', 'comfyui:wan-2.7#1']);
  });

  it('a relative workflow path is read from the catalog file’s folder', () => {
    workflowFile('relative.json', { '1': node('SaveImage', { filename_prefix: 'x', images: ['2', 0], text: '{{prompt}}' }) });
    expect(build({ 'google/nano-banana': { routes: [{ backend: 'comfyui', servers: ['http://gpu:8188'], workflow: 'relative.json' }] } }).size).toBe(1);
  });

  it('an unknown placeholder, a placeholder inside a longer text, the editor format and a missing file name the file and the spot', () => {
    const route = (workflow: string) => ({ 'google/nano-banana': { routes: [{ backend: 'comfyui', servers: ['http://gpu:8188'], workflow }] } });
    const unknown = workflowFile('unknown.json', { '6': node('CLIPTextEncode', { text: '{{promt}}' }) });
    expect(configError(() => build(route(unknown)))).toMatch(
      new RegExp(
        `models\\."google/nano-banana"\\.routes\\[0\\]\\.workflow: ${unknown}: node "6" inputs\\.text: unknown placeholder \\{\\{promt\\}\\}; known: prompt, `,
      ),
    );
    const partial = workflowFile('partial.json', { '6': node('CLIPTextEncode', { text: 'photo of {{prompt}}' }) });
    expect(configError(() => build(route(partial)))).toMatch(/node "6" inputs\.text holds "photo of \{\{prompt\}\}"; a placeholder must be the whole value/);
    const editor = workflowFile('editor.json', { nodes: [], links: [] });
    expect(configError(() => build(route(editor)))).toMatch(/editor's format; export it with "Export \(API\)"/);
    expect(configError(() => build(route('missing.json')))).toMatch(/missing\.json: cannot be read \(ENOENT\)/);
    const notJson = path.join(dir, 'broken.json');
    writeFileSync(notJson, '{"1": ');
    expect(configError(() => build(route(notJson)))).toMatch(/broken\.json: is not JSON/);
  });

  it('a placeholder the model cannot fill stops the start', () => {
    const frame = workflowFile('frame.json', { '5': node('LoadImage', { image: '{{first_frame}}' }) });
    expect(configError(() => build({ 'google/nano-banana': { routes: [{ backend: 'comfyui', servers: ['http://gpu:8188'], workflow: frame }] } }))).toMatch(
      /placeholder \{\{first_frame\}\} needs the input first_frame_url, which google\/nano-banana does not have/,
    );
    const frames = workflowFile('frames.json', { '9': node('EmptyLatentVideo', { length: '{{frames}}' }) });
    expect(configError(() => build({ 'google/nano-banana': { routes: [{ backend: 'comfyui', servers: ['http://gpu:8188'], workflow: frames }] } }))).toMatch(
      /\{\{frames\}\} needs a video model with a duration/,
    );
  });

  it('route fields are checked when the catalog is read', () => {
    const at = (route: Record<string, unknown>) =>
      configError(() => buildCatalog({ models: { 'google/nano-banana': { routes: [{ backend: 'comfyui', ...route }] } } }, 'GENGATE_CATALOG c.json'));
    expect(at({ workflow: 'w.json' })).toMatch(/routes\[0\]\.servers: must be a list of 1 to 32 ComfyUI addresses/);
    expect(at({ servers: ['ftp://gpu'], workflow: 'w.json' })).toMatch(/routes\[0\]\.servers\[0\]: must be an http/);
    expect(at({ servers: ['http://gpu:8188', 'http://gpu:8188/'], workflow: 'w.json' })).toMatch(/lists http:\/\/gpu:8188 twice/);
    expect(at({ servers: ['http://gpu:8188'] })).toMatch(/routes\[0\]\.workflow: must be the path of a workflow file/);
    expect(at({ servers: ['http://gpu:8188'], workflow: 'w.json', fps: 0 })).toMatch(/routes\[0\]\.fps: must be a whole number/);
    expect(at({ servers: ['http://gpu:8188'], workflow: 'w.json', map: {} })).toMatch(
      /routes\[0\]\.map: unknown field; a comfyui route has backend, name, servers, workflow/,
    );
  });
});

describe('comfyui backend against a fake ComfyUI', () => {
  const kit = useUpstreamKit();
  let fake: Awaited<ReturnType<typeof startComfyFake>>;
  let other: Awaited<ReturnType<typeof startComfyFake>>;
  beforeAll(async () => {
    fake = await startComfyFake({ image: kit.image, video: kit.video });
    other = await startComfyFake({ image: kit.image, video: kit.video, load: 5 });
  });
  afterAll(async () => {
    await Promise.all([fake?.close(), other?.close()]);
  });
  const make = (servers: string[]) => {
    const catalog = buildCatalog({ models: { 'google/nano-banana': { routes: [{ backend: 'comfyui', servers, workflow: IMAGE_WORKFLOW }] } } });
    return createComfyBackend({
      name: 'comfy-test',
      baseUrl: servers[0]!,
      apiKey: '',
      upstreamModel: 'google/nano-banana',
      http: kit.http,
      tmpDir: kit.tmpDir,
      files: noFiles,
      route: catalog.find('google/nano-banana')!.routes[0]!,
      modelDef: catalog.find('google/nano-banana')!,
      baseDir: dir,
      at: 'test',
    });
  };
  it('a repeated submit finds the job it queued (same prompt id) instead of queueing a second one', async () => {
    const backend = make([other.url, fake.url]);
    const job = jobOf('google/nano-banana', 'image', { prompt: 'twice', aspect_ratio: '1:1' });
    const first = await backend.submit(job);
    const again = await backend.submit(job);
    expect(again).toBe(first);
    expect(fake.queued().filter((j) => j.text.includes('twice'))).toHaveLength(1);
    expect(other.queued()).toHaveLength(0);
    const seen = await pollUntilSettled(backend, job, first);
    expect(seen.map((x) => x.state)).toEqual(['running', 'running', 'done']);
    const out = await backend.results(job, first);
    expect(out.files).toHaveLength(1);
  });

  it('no server answering is NotAccepted (the engine retries, then fails over)', async () => {
    const dead = await startComfyFake({ image: kit.image, video: kit.video });
    await dead.close();
    const e = await notAccepted(make([dead.url]).submit(jobOf('google/nano-banana', 'image', { prompt: 'nobody home' })));
    expect(e.message).toMatch(/no ComfyUI server of comfy-test answers/);
  });

  it('a server that dies mid-job: following it is transient trouble (asked again), cancel is unclear; a server that lost the job fails it (503)', async () => {
    const dying = await startComfyFake({ image: kit.image, video: kit.video });
    const b = make([dying.url]);
    const job = jobOf('google/nano-banana', 'image', { prompt: '[die] mid-way' });
    const ref = await b.submit(job);
    expect(await b.progress(job, ref)).toMatchObject({ state: 'running' });
    const e = await rejectionOf(b.progress(job, ref));
    expect(e).toBeInstanceOf(Error);
    expect(e).not.toBeInstanceOf(BackendFailure);
    expect(await b.cancel(job, ref)).toBe('unknown');
    // A restarted server no longer knows the prompt id (its queue and history lived in memory).
    const lost = `${ref.split('@')[0]}@${fake.url}`;
    const fb = make([fake.url]);
    expect(await fb.progress(job, lost)).toMatchObject({ state: 'failed', kind: 'unavailable', message: expect.stringMatching(/no longer knows the job/) });
    expect(await fb.cancel(job, lost)).toBe('cancelled');
    // A server removed from the route is never called again with the job.
    expect(await rejectionOf(fb.progress(job, ref))).toBeInstanceOf(BackendFailure);
  });

  it('a finished job cannot be cancelled; a failed workflow reports its node error', async () => {
    const b = make([fake.url]);
    const job = jobOf('google/nano-banana', 'image', { prompt: 'done already' });
    const ref = await b.submit(job);
    await pollUntilSettled(b, job, ref);
    expect(await b.cancel(job, ref)).toBe('not-cancellable');
    const bad = jobOf('google/nano-banana', 'image', { prompt: '[fail] oom' });
    const badRef = await b.submit(bad);
    const seen = await pollUntilSettled(b, bad, badRef);
    expect(seen.at(-1)).toMatchObject({ state: 'failed', kind: 'generation', message: expect.stringMatching(/KSampler: torch\.OutOfMemoryError: Allocation/) });
  });

  it('a job that saved no file of the model’s kind fails instead of succeeding', async () => {
    const b = make([fake.url]);
    const job = jobOf('google/nano-banana', 'image', { prompt: '[nothing]' });
    const ref = await b.submit(job);
    await pollUntilSettled(b, job, ref);
    const e = await rejectionOf(b.results(job, ref));
    expect(e).toBeInstanceOf(BackendFailure);
    expect((e as Error).message).toMatch(/without a image file/);
  });

  it('a video workflow without the photo its {{first_frame}} needs is refused before anything is queued', async () => {
    const catalog = buildCatalog({ models: { 'wan-2.7': { routes: [{ backend: 'comfyui', servers: [fake.url], workflow: VIDEO_WORKFLOW }] } } });
    const model = catalog.find('wan-2.7')!;
    const b = createComfyBackend({
      name: 'wan',
      baseUrl: fake.url,
      apiKey: '',
      upstreamModel: 'wan-2.7',
      http: kit.http,
      tmpDir: kit.tmpDir,
      files: noFiles,
      route: model.routes[0]!,
      modelDef: model,
      baseDir: dir,
      at: 'test',
    });
    const before = fake.queued().length;
    const e = await rejectionOf(b.submit(jobOf('wan-2.7', 'video', { prompt: 'no photo', duration: 5, resolution: '480p' })));
    expect(e).toMatchObject({ kind: 'rejected', message: expect.stringMatching(/needs a photo in input\.first_frame_url/) });
    expect(fake.queued().length).toBe(before);
  });
});
