import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BackendFailure, type Backend } from '../../src/backends/index.js';
import { createComfyBackend, type ComfyBackend } from '../../src/backends/comfyui/index.js';
import { BACKEND_KINDS_BUILT } from '../../src/backends/kinds.js';
import { buildRouteBackends } from '../../src/backends/registry.js';
import { buildCatalog, configuredRoutes, makeCatalog, type Catalog } from '../../src/catalog/index.js';
import { ConfigError } from '../../src/config.js';
import type { Files } from '../../src/files/index.js';
import { startComfyFake } from '../fakes/comfyui.js';
import { eventually } from '../tasks/support.js';
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
  // As loadCatalog does: the shipped kie.ai market's optional routes are left out without KIE_API_KEY (decision 3311).
  const built = buildCatalog({ models }, `GENGATE_CATALOG ${dir}/catalog.json`);
  const catalog: Catalog = makeCatalog(configuredRoutes(built.models, {}), `GENGATE_CATALOG ${dir}/catalog.json`);
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
  }, 240_000);
});

describe('comfyui backend against a fake ComfyUI', () => {
  const kit = useUpstreamKit();
  let fake: Awaited<ReturnType<typeof startComfyFake>>;
  let other: Awaited<ReturnType<typeof startComfyFake>>;
  let live: Awaited<ReturnType<typeof startComfyFake>>;
  const made: Backend[] = [];
  beforeAll(async () => {
    // These two serve no websocket (a proxy that does not pass it): jobs are followed over HTTP, moved on by each look.
    fake = await startComfyFake({ image: kit.image, video: kit.video, socket: false });
    other = await startComfyFake({ image: kit.image, video: kit.video, load: 5, socket: false });
    live = await startComfyFake({ image: kit.image, video: kit.video, token: 'proxy-token' });
  });
  afterAll(async () => {
    await Promise.all(made.map((b) => b.close?.()));
    await Promise.all([fake?.close(), other?.close(), live?.close()]);
  });
  const make = (servers: string[], extra: { apiKey?: string; due?: (taskId: string) => void } = {}) => {
    const catalog = buildCatalog({ models: { 'google/nano-banana': { routes: [{ backend: 'comfyui', servers, workflow: IMAGE_WORKFLOW }] } } });
    const backend = createComfyBackend({
      name: 'comfy-test',
      baseUrl: servers[0]!,
      apiKey: extra.apiKey ?? '',
      ...(extra.due ? { due: extra.due } : {}),
      upstreamModel: 'google/nano-banana',
      http: kit.http,
      tmpDir: kit.tmpDir,
      files: noFiles,
      route: catalog.find('google/nano-banana')!.routes[0]!,
      modelDef: catalog.find('google/nano-banana')!,
      baseDir: dir,
      at: 'test',
    });
    made.push(backend);
    return backend as ComfyBackend;
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
    // Without a websocket on the server nothing changed: no connection was made, every look was over HTTP.
    expect(fake.connections).toHaveLength(0);
    expect(backend.socketOpen(fake.url)).toBe(false);
  });

  // Issue 36 item 5: placement counts this process's hand-offs in flight, not only each server's queue.
  it('four simultaneous submits on four idle servers place one job on each', async () => {
    const idle = await Promise.all([0, 1, 2, 3].map(() => startComfyFake({ image: kit.image, video: kit.video, socket: false })));
    try {
      const b = make(idle.map((f) => f.url));
      const jobs = [0, 1, 2, 3].map((i) => jobOf('google/nano-banana', 'image', { prompt: `burst ${i}`, aspect_ratio: '1:1' }));
      const refs = await Promise.all(jobs.map((j) => b.submit(j)));
      expect(idle.map((f) => f.queued().length)).toEqual([1, 1, 1, 1]);
      expect(new Set(refs.map((r) => r.split('@')[1])).size).toBe(4);
    } finally {
      await Promise.all(idle.map((f) => f.close()));
    }
  });

  it('no server answering is NotAccepted (the engine retries, then fails over)', async () => {
    const dead = await startComfyFake({ image: kit.image, video: kit.video });
    await dead.close();
    const e = await notAccepted(make([dead.url]).submit(jobOf('google/nano-banana', 'image', { prompt: 'nobody home' })));
    expect(e.message).toMatch(/no ComfyUI server of comfy-test answers/);
  });

  it('a server that dies mid-job: following it is transient trouble (asked again), cancel is unclear; a server that lost the job fails it (503)', async () => {
    const dying = await startComfyFake({ image: kit.image, video: kit.video, socket: false });
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

  /** /history and /queue calls made for a prompt (how often it was followed over HTTP). */
  const httpLooks = (fake: { calls: { path: string }[] }, id: string) => fake.calls.filter((c) => c.path === `/history/${id}` || c.path === '/queue').length;
  /** Waits until the fake runs the job on its own (it started while the backend's socket was open). */
  const runningLive = (fake: Awaited<ReturnType<typeof startComfyFake>>, id: string) =>
    eventually(() => fake.jobs.get(id)?.state === 'running' && fake.jobs.get(id)?.live === true, 15_000, `job ${id} running with the socket open`);

  it('with the websocket open, progress is the node’s percentage heard on it, without HTTP calls; the end makes the task due and /history gives the outcome', async () => {
    const dues: string[] = [];
    const b = make([live.url], { apiKey: 'proxy-token', due: (taskId) => dues.push(taskId) });
    const job = jobOf('google/nano-banana', 'image', { prompt: '[stepwise] heard on the socket' });
    const ref = await b.submit(job);
    const id = ref.split('@')[0]!;
    await runningLive(live, id);
    // One connection, with the route's token and the client id sent with /prompt.
    expect(live.connections).toHaveLength(1);
    expect(live.connections[0]!.headers.authorization).toBe('Bearer proxy-token');
    const prompt = live.calls.find((c) => c.path === '/prompt')!.body as { client_id: string };
    expect(live.connections[0]!.clientId).toBe(prompt.client_id);
    live.step(id);
    await eventually(async () => ((await b.progress(job, ref)) as { progress?: number }).progress === 25);
    const looks = httpLooks(live, id);
    const seen: number[] = [25];
    for (const want of [50, 75, 99]) {
      live.step(id);
      await eventually(async () => ((await b.progress(job, ref)) as { progress?: number }).progress === want);
      seen.push(want);
    }
    expect(seen).toEqual([25, 50, 75, 99]);
    expect(httpLooks(live, id)).toBe(looks);
    // The binary preview frame after the first progress was read past: the same connection is still open.
    expect(b.socketOpen(live.url)).toBe(true);
    expect(live.connections).toHaveLength(1);
    // `execution_success` comes before ComfyUI writes the record: the socket says it ended, /history has nothing yet, /queue says running.
    live.step(id);
    expect(await b.progress(job, ref)).toMatchObject({ state: 'running' });
    expect(dues).toEqual([]);
    // `executing` with no node comes once the record is written: the task is due now.
    live.step(id);
    await eventually(() => dues.length === 1);
    expect(dues).toEqual([job.taskId]);
    expect(await b.progress(job, ref)).toEqual({ state: 'done' });
    expect((await b.results(job, ref)).files).toHaveLength(1);
  });

  it('a failed workflow: the socket makes the task due, the failure is read from /history; an interrupted job is not made due (a cancel writes next, or the next poll finds it)', async () => {
    const dues: string[] = [];
    const b = make([live.url], { apiKey: 'proxy-token', due: (taskId) => dues.push(taskId) });
    const bad = jobOf('google/nano-banana', 'image', { prompt: '[fail] out of memory' });
    const badRef = await b.submit(bad);
    await eventually(() => dues.includes(bad.taskId));
    expect(await b.progress(bad, badRef)).toMatchObject({
      state: 'failed',
      kind: 'generation',
      message: expect.stringMatching(/torch\.OutOfMemoryError/),
    });
    const long = jobOf('google/nano-banana', 'image', { prompt: '[hang] until the operator stops it' });
    const ref = await b.submit(long);
    const id = ref.split('@')[0]!;
    await runningLive(live, id);
    await eventually(async () => ((await b.progress(long, ref)) as { progress?: number }).progress === 25);
    // Someone interrupts it on the server (as GenGate's cancel does).
    const r = await fetch(`${live.url}/interrupt`, {
      method: 'POST',
      headers: { authorization: 'Bearer proxy-token', 'content-type': 'application/json' },
      body: JSON.stringify({ prompt_id: id }),
    });
    expect(r.status).toBe(200);
    await eventually(async () => (await b.progress(long, ref)).state === 'failed');
    // A job that ends after it on the same connection: its `executing` with no node is read after the interrupted one's.
    const next = jobOf('google/nano-banana', 'image', { prompt: 'after the interruption' });
    await b.submit(next);
    await eventually(() => dues.includes(next.taskId));
    expect(dues).toEqual([bad.taskId, next.taskId]);
  });

  it('a socket that drops: the job is followed over HTTP meanwhile, the socket connects again and is used once it hears of the job; a job that ends while it is down is finished by /history', async () => {
    const b = make([live.url], { apiKey: 'proxy-token' });
    const job = jobOf('google/nano-banana', 'image', { prompt: '[stepwise] through a drop' });
    const ref = await b.submit(job);
    const id = ref.split('@')[0]!;
    await runningLive(live, id);
    live.step(id);
    await eventually(async () => ((await b.progress(job, ref)) as { progress?: number }).progress === 25);
    // Other backends' sockets to this fake come and go too: only this one's are counted.
    const mine = () => live.connections.filter((c) => c.clientId === live.clientOf(id)).length;
    const connections = mine();
    live.dropSockets(true);
    await eventually(() => !b.socketOpen(live.url));
    const looks = httpLooks(live, id);
    expect(await b.progress(job, ref)).toEqual({ state: 'running' });
    expect(httpLooks(live, id)).toBeGreaterThan(looks);
    live.acceptSockets();
    await eventually(() => b.socketOpen(live.url), 15_000, 'the socket connected again');
    expect(mine()).toBe(connections + 1);
    // The new connection has heard nothing of the job yet: HTTP until it does.
    live.step(id);
    await eventually(async () => ((await b.progress(job, ref)) as { progress?: number }).progress === 50);
    const after = httpLooks(live, id);
    expect(await b.progress(job, ref)).toEqual({ state: 'running', progress: 50 });
    expect(httpLooks(live, id)).toBe(after);
    // Down again while the job ends: its messages are lost. Connected again, the socket has heard
    // nothing of the job (what the old connection heard is forgotten): /history has the outcome.
    live.dropSockets(true);
    await eventually(() => !b.socketOpen(live.url));
    for (let i = 0; i < 4; i++) live.step(id);
    expect(live.jobs.get(id)!.state).toBe('success');
    live.acceptSockets();
    await eventually(() => b.socketOpen(live.url), 15_000, 'the socket connected again');
    expect(await b.progress(job, ref)).toEqual({ state: 'done' });
  });

  it('a server that dies mid-job with its socket open: the socket closes, following is transient trouble as before, cancel is unclear', async () => {
    const dying = await startComfyFake({ image: kit.image, video: kit.video });
    const b = make([dying.url]);
    const job = jobOf('google/nano-banana', 'image', { prompt: '[die] with the socket open' });
    const ref = await b.submit(job);
    const id = ref.split('@')[0]!;
    await eventually(() => dying.jobs.get(id)?.live === true);
    await eventually(() => !b.socketOpen(dying.url), 15_000, 'the socket closed with the server');
    const e = await rejectionOf(b.progress(job, ref));
    expect(e).toBeInstanceOf(Error);
    expect(e).not.toBeInstanceOf(BackendFailure);
    expect(await b.cancel(job, ref)).toBe('unknown');
    await b.close();
    await dying.close();
  });

  it('close: the websockets are closed and not opened again; following goes on over HTTP', async () => {
    const b = make([live.url], { apiKey: 'proxy-token' });
    const job = jobOf('google/nano-banana', 'image', { prompt: 'closed at the end' });
    const ref = await b.submit(job);
    const client = live.clientOf(ref.split('@')[0]!)!;
    await eventually(() => b.socketOpen(live.url) && live.clients(client) === 1);
    await b.close();
    expect(b.socketOpen(live.url)).toBe(false);
    await eventually(() => live.clients(client) === 0, 15_000, 'the server saw the socket close');
    const connections = live.connections.filter((c) => c.clientId === client).length;
    await eventually(async () => (await b.progress(job, ref)).state === 'done');
    expect(b.socketOpen(live.url)).toBe(false);
    expect(live.connections.filter((c) => c.clientId === client)).toHaveLength(connections);
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
