import { mkdtempSync, writeFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { hashOf } from '../media/helpers.js';
import { startComfyFake } from '../fakes/comfyui.js';
import { upload } from '../files/support.js';
import { FAST, MovableClock, create, eventually, expectLedgerInvariant, fetchFile, info, resultUrls, settle, taskEntries } from '../tasks/support.js';
import { useUpstreamKit } from './helpers.js';
import { expectMoneyInvariant } from '../billing/money-checks.js';

const scratch = mkdtempSync(path.join(tmpdir(), 'gengate-comfyui-'));
const IMAGE_WORKFLOW = path.resolve('docs/comfyui/text-to-image.json');
const VIDEO_WORKFLOW = path.resolve('docs/comfyui/image-to-video.json');

type Fake = Awaited<ReturnType<typeof startComfyFake>>;

/**
 * The comfyui backend kind through the whole engine, with the example workflows of docs/comfyui/
 * (the fake refuses any graph with a placeholder left or a string where a number belongs): load
 * shared by queue length with a dead server skipped, fail-over from a dead ComfyUI route to a
 * second one, photos uploaded first, outputs re-hosted, failures and cancels refunded once, the
 * 20-minute limit with an upstream interrupt.
 */
describe.each(dialects())('comfyui routes end to end on %s', (dialect) => {
  const kit = useUpstreamKit();
  const clock = new MovableClock();
  let s: TestServer;
  let busy: Fake;
  let idle: Fake;
  let gpu: Fake;
  let deadUrl: string;
  let photo: string;

  beforeAll(async () => {
    const dead = await startComfyFake({ image: kit.image, video: kit.video });
    deadUrl = dead.url;
    await dead.close();
    busy = await startComfyFake({ image: kit.image, video: kit.video, load: 3, token: 'comfy-proxy' });
    idle = await startComfyFake({ image: kit.image, video: kit.video, load: 1, token: 'comfy-proxy' });
    gpu = await startComfyFake({ image: kit.image, video: kit.video });
    const catalog = path.join(scratch, `catalog-${dialect}.json`);
    writeFileSync(
      catalog,
      JSON.stringify({
        models: {
          'google/nano-banana': {
            routes: [{ backend: 'comfyui', name: 'banana-gpus', servers: [deadUrl, busy.url, idle.url], workflow: IMAGE_WORKFLOW, key_env: 'E2E_COMFY_TOKEN' }],
          },
          'wan-2.7': {
            routes: [
              { backend: 'comfyui', name: 'wan-down', servers: [deadUrl], workflow: VIDEO_WORKFLOW },
              { backend: 'comfyui', name: 'wan-gpu', servers: [gpu.url], workflow: path.relative(scratch, VIDEO_WORKFLOW), fps: 16, concurrency: 5 },
            ],
          },
        },
      }),
    );
    s = await startServer(
      dialect,
      { ...FAST, GENGATE_CATALOG: catalog, ALLOW_PRIVATE_NETWORK: 'true', UPSTREAM_POLL_MS: '20', ENGINE_MAX_ATTEMPTS: '2', E2E_COMFY_TOKEN: 'comfy-proxy' },
      undefined,
      { clock },
    );
    s.services.engine.start();
    const { key } = await s.account(1, 'uploader');
    const up = await upload(s, key, kit.frame, 'start.png');
    expect(up.status, JSON.stringify(up.body)).toBe(200);
    photo = up.body.data.url;
  });
  afterAll(async () => {
    await s?.close();
    await Promise.all([busy?.close(), idle?.close(), gpu?.close()]);
  });

  async function download(link: string, name: string): Promise<string> {
    const res = await fetchFile(s, link);
    expect(res.status).toBe(200);
    const file = path.join(kit.dir, `${dialect}-${name}`);
    await writeFile(file, Buffer.from(await res.arrayBuffer()));
    return file;
  }

  it('an image task goes to the server with the shortest queue (the dead one skipped), placeholders filled, and its output is re-hosted', async () => {
    const { key } = await s.account(10);
    const id = await create(s, key, 'google/nano-banana', { prompt: 'a red kite over dunes', aspect_ratio: '16:9', seed: 1234 });
    const t = await settle(s, key, id);
    expect(t.state, JSON.stringify(t)).toBe('success');
    expect(busy.queued()).toHaveLength(0);
    const [job] = idle.queued();
    const graph = job!.graph as Record<string, { inputs: Record<string, unknown> }>;
    expect(graph['6']!.inputs.text).toBe('a red kite over dunes');
    expect(graph['7']!.inputs.text).toBe('');
    expect(graph['3']!.inputs.seed).toBe(1234);
    expect(graph['5']!.inputs).toMatchObject({ width: 1024, height: 576 });
    expect(idle.calls.some((c) => c.method === 'POST' && c.path === '/prompt')).toBe(true);
    const link = resultUrls(t)[0]!;
    expect(link).not.toContain(idle.url);
    expect(await hashOf(await download(link, 'comfy.png'))).toBe(await hashOf(kit.image));
    // The temp preview of the workflow is not what was re-hosted: only the saved output was fetched.
    expect(idle.calls.filter((c) => c.path.startsWith('/view')).map((c) => new URL(c.path, 'http://x').searchParams.get('type'))).toEqual(['output']);
  });

  it('a video task fails over from a dead ComfyUI route to the second; the first frame is uploaded first; frames come from duration and fps', async () => {
    const { key } = await s.account(10);
    const id = await create(s, key, 'wan-2.7', { prompt: 'the kite lands', first_frame_url: photo, duration: 5, resolution: '480p', aspect_ratio: '16:9' });
    const t = await settle(s, key, id);
    expect(t.state, JSON.stringify(t)).toBe('success');
    const job = gpu.queued().find((j) => j.text.includes('the kite lands'))!;
    const graph = job.graph as Record<string, { inputs: Record<string, unknown> }>;
    expect(graph['9']!.inputs).toMatchObject({ width: 854, height: 480, length: 81 });
    expect(graph['13']!.inputs.fps).toBe(16);
    const uploaded = String(graph['5']!.inputs.image);
    expect(uploaded).toMatch(/^gengate-.+-first_frame\.png$/);
    expect(gpu.uploads.get(uploaded)?.bytes).toBeGreaterThan(0);
    const upload = gpu.calls.findIndex((c) => c.path === '/upload/image');
    const prompt = gpu.calls.findIndex((c) => c.path === '/prompt' && JSON.stringify(c.body).includes('the kite lands'));
    expect(upload).toBeGreaterThanOrEqual(0);
    expect(upload).toBeLessThan(prompt);
    const row = await s.services.database.db.selectFrom('tasks').select(['backend', 'backend_ref']).where('id', '=', id).executeTakeFirstOrThrow();
    expect(row.backend).toBe('wan-gpu');
    expect(row.backend_ref).toBe(`${job.id}@${gpu.url}`);
    expect(await hashOf(await download(t.resultJson.videos[0].url, 'comfy.mp4'))).toBe(await hashOf(kit.video));
    expect(t.resultJson.duration).toBeCloseTo(2, 0);
    // Like every route: its submits counted per outcome, its breaker shown (kind and state only, never addresses).
    const metrics = await (await fetch(`${s.url}/metrics`)).text();
    expect(metrics).toContain('gengate_route_submits_total{route="wan-down",outcome="not_accepted"} 2');
    expect(metrics).toMatch(/gengate_route_submits_total\{route="wan-gpu",outcome="accepted"\} [1-9]/);
    const wan = (await s.call('GET', '/api/v1/models')).body.data.find((m: { id: string }) => m.id === 'wan-2.7');
    expect(wan.routes.map((r: { backend: string }) => r.backend)).toEqual(['comfyui', 'comfyui']);
    expect(JSON.stringify(wan.routes)).not.toContain('127.0.0.1');
  });

  it('progress heard on the websocket: the task shows it rising while generating, without looks at /history meanwhile', async () => {
    const { key } = await s.account(10);
    // The route's socket to the server opens with its first job: one job first, so this one starts with it open.
    if (gpu.clients() === 0) {
      const first = await create(s, key, 'wan-2.7', { prompt: 'opens the socket', first_frame_url: photo, duration: 5, resolution: '480p' });
      expect((await settle(s, key, first)).state).toBe('success');
    }
    const id = await create(s, key, 'wan-2.7', { prompt: '[stepwise] a slow pan', first_frame_url: photo, duration: 5, resolution: '480p' });
    const job = (await eventually(() => gpu.queued().find((j) => j.text.includes('a slow pan') && j.state === 'running' && j.live)))!;
    const looks = () => gpu.calls.filter((c) => c.path === `/history/${job.id}`).length;
    const seen: number[] = [];
    let before = -1;
    for (const want of [25, 50, 75, 99]) {
      gpu.step(job.id);
      const t = await eventually(async () => {
        const t = await info(s, key, id);
        return t.progress === want ? t : null;
      });
      expect(t.state).toBe('generating');
      seen.push(t.progress);
      // Once the socket has heard of the job, no look at /history until it ends.
      if (before >= 0) expect(looks()).toBe(before);
      before = looks();
    }
    expect(seen).toEqual([25, 50, 75, 99]);
    gpu.step(job.id);
    gpu.step(job.id);
    const t = await settle(s, key, id);
    expect(t).toMatchObject({ state: 'success', progress: 100 });
    expect(looks()).toBeGreaterThan(before);
  });

  it('a workflow that fails on the GPU fails the task (501) and refunds it once', async () => {
    const { key } = await s.account(10);
    const id = await create(s, key, 'wan-2.7', { prompt: '[fail] a storm', first_frame_url: photo, duration: 5, resolution: '480p' });
    const t = await settle(s, key, id);
    expect(t).toMatchObject({ state: 'fail', failCode: 501, refunded: true });
    expect(t.failMsg).toMatch(/OutOfMemory|Allocation/);
    const e = await taskEntries(s, id);
    expect(e.refund).toBe(-e.charge!);
    await expectLedgerInvariant(s.services.database);
  });

  it('cancel: a running job is interrupted, a pending one deleted from the queue; both refunded once (499)', async () => {
    const { key } = await s.account(10);
    const running = await create(s, key, 'wan-2.7', { prompt: '[hang] long take', first_frame_url: photo, duration: 5, resolution: '480p' });
    await eventually(async () => (await info(s, key, running)).state === 'generating');
    const pending = await create(s, key, 'wan-2.7', { prompt: 'waits its turn', first_frame_url: photo, duration: 5, resolution: '480p' });
    await eventually(() => gpu.queued().some((j) => j.text.includes('waits its turn') && j.state === 'pending'));
    // Handed over and recorded (not a hand-off in flight, which a cancel fails at once and the engine then cancels as an orphan).
    await eventually(async () => (await info(s, key, pending)).state === 'queuing');
    for (const id of [pending, running]) {
      const r = await s.call('POST', '/api/v1/jobs/cancel', { key, body: { taskId: id } });
      const t = await info(s, key, id);
      if (r.status === 200) expect(t).toMatchObject({ state: 'fail', failCode: 499, refunded: true });
      else {
        // The engine may look at the job between the server's cancel and the cancel's own write: it then
        // finds the job gone (or interrupted) first and fails the task itself (503); refunded either way, once.
        expect(r.status, JSON.stringify(r.body)).toBe(409);
        expect(r.body.msg).toMatch(/already final: it failed \(failCode 503\)/);
        expect(t).toMatchObject({ state: 'fail', failCode: 503, refunded: true });
      }
      const e = await taskEntries(s, id);
      expect(e.refund).toBe(-e.charge!);
    }
    const seen = () =>
      JSON.stringify([
        gpu.calls
          .filter((c) => c.method === 'POST' || c.path === '/queue')
          .map((c) => [c.method, c.path, c.body && typeof c.body === 'object' && 'delete' in c.body ? c.body : '']),
        gpu.queued().map((j) => [j.state, j.looks, j.interrupted, j.text.slice(j.text.indexOf('"text":"') + 8, j.text.indexOf('"text":"') + 20)]),
      ]);
    expect(
      gpu.calls.some((c) => c.path === '/queue' && c.method === 'POST' && JSON.stringify(c.body).includes('delete')),
      seen(),
    ).toBe(true);
    expect(
      gpu.calls.some((c) => c.path === '/interrupt'),
      seen(),
    ).toBe(true);
    expect(gpu.queued().some((j) => j.text.includes('waits its turn'))).toBe(false);
    expect(gpu.queued().find((j) => j.text.includes('long take'))).toMatchObject({ interrupted: true });
    await expectLedgerInvariant(s.services.database);
  });

  it('the 20-minute limit: a job still running fails 504, is refunded, and is interrupted on the server', async () => {
    const { key } = await s.account(10);
    const id = await create(s, key, 'wan-2.7', { prompt: '[hang] endless', first_frame_url: photo, duration: 5, resolution: '480p' });
    await eventually(async () => (await info(s, key, id)).state === 'generating');
    const interrupts = gpu.calls.filter((c) => c.path === '/interrupt').length;
    clock.advance(20 * 60_000);
    const t = await settle(s, key, id);
    expect(t).toMatchObject({ state: 'fail', failCode: 504, refunded: true });
    await eventually(() => gpu.calls.filter((c) => c.path === '/interrupt').length > interrupts);
    expect(gpu.queued().find((j) => j.text.includes('endless'))).toMatchObject({ interrupted: true });
    await expectLedgerInvariant(s.services.database);
  });

  it('money: after every failure, cancel and success above, the balances, key spend, usage and the money report agree', async () => {
    await eventually(
      async () =>
        (await s.services.database.db.selectFrom('tasks').select('id').where('state', 'in', ['waiting', 'queuing', 'generating']).execute()).length === 0,
    );
    await expectMoneyInvariant(s);
  });
});

/**
 * With a poll interval far longer than the test (10 minutes), a task can only finish because the
 * route's websocket heard its job end and made it due (engine/notice.ts taskDue); and the route's
 * websockets close with the services.
 */
describe.each(dialects())('comfyui websocket through the engine on %s', (dialect) => {
  const kit = useUpstreamKit();
  let s: TestServer | null = null;
  let gpu: Fake;

  beforeAll(async () => {
    gpu = await startComfyFake({ image: kit.image, video: kit.video });
    const catalog = path.join(scratch, `catalog-ws-${dialect}.json`);
    writeFileSync(
      catalog,
      JSON.stringify({ models: { 'google/nano-banana': { routes: [{ backend: 'comfyui', name: 'ws-gpu', servers: [gpu.url], workflow: IMAGE_WORKFLOW }] } } }),
    );
    s = await startServer(dialect, { ...FAST, GENGATE_CATALOG: catalog, ALLOW_PRIVATE_NETWORK: 'true', UPSTREAM_POLL_MS: '600000' });
    s.services.engine.start();
  });
  afterAll(async () => {
    await s?.close();
    await gpu?.close();
  });

  it('a job that ends is noticed at once: the socket makes its task due, no poll interval waited', async () => {
    const { key } = await s!.account(10);
    for (const prompt of ['[stepwise] a heron', '[stepwise] [fail] a heron in the rain']) {
      const id = await create(s!, key, 'google/nano-banana', { prompt, aspect_ratio: '1:1' });
      const job = (await eventually(() => gpu.queued().find((j) => j.text.includes(prompt) && j.state === 'running' && j.live)))!;
      // Handed over and recorded: from now on only a poll (in 10 minutes) or the socket's notice can finish it.
      await eventually(async () => (await info(s!, key, id)).state === 'queuing');
      while (gpu.jobs.get(job.id)!.state === 'running') gpu.step(job.id);
      const t = await settle(s!, key, id);
      if (prompt.includes('[fail]')) expect(t).toMatchObject({ state: 'fail', failCode: 501, refunded: true });
      else expect(t.state, JSON.stringify(t)).toBe('success');
    }
    // Each job ran with the socket open, and nothing was read while it ran: the only /queue reads are the two submits' load probes.
    expect(gpu.queued().map((j) => j.live)).toEqual([true, true]);
    expect(gpu.calls.filter((c) => c.path === '/queue' && c.method === 'GET')).toHaveLength(2);
    await expectLedgerInvariant(s!.services.database);
  });

  it('shutdown closes the route’s websocket', async () => {
    expect(gpu.clients()).toBe(1);
    await s!.close();
    s = null;
    await eventually(() => gpu.clients() === 0, 15_000, 'the server saw the socket close');
  });
});
