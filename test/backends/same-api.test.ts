import { mkdtempSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BackendFailure, type BackendJob } from '../../src/backends/index.js';
import { renderImage } from '../../src/backends/local/render.js';
import { SameApiBackend } from '../../src/backends/same-api/index.js';
import { NotAccepted, UpstreamHttp } from '../../src/backends/upstream/index.js';
import { NetGuard } from '../../src/net/index.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { upload } from '../files/support.js';

type Handler = (req: { method: string; path: string; headers: http.IncomingHttpHeaders; body: Buffer }) => {
  status: number;
  json?: unknown;
  raw?: Buffer;
  type?: string;
};

/** The same-API adapter against a local server answering as SPEC.md documents, failure shapes included. */
describe('same-API adapter', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'gengate-same-api-'));
  const png = path.join(dir, 'r.png');
  let s: TestServer;
  let server: http.Server;
  let base = '';
  let handle: Handler = () => ({ status: 500 });
  const seen: Array<{ method: string; path: string; headers: http.IncomingHttpHeaders; body: Buffer }> = [];
  let backend: SameApiBackend;
  let key = '';
  const guard = new NetGuard({ allowPrivate: true });

  beforeAll(async () => {
    await renderImage({ format: 'png', prompt: 'same api' }, png);
    s = await startServer('sqlite');
    key = (await s.account(1)).key;
    server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const call = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) };
        seen.push(call);
        const a = handle(call);
        res.writeHead(a.status, { 'content-type': a.type ?? 'application/json' }).end(a.raw ?? JSON.stringify(a.json ?? {}));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    backend = new SameApiBackend({
      name: 'same-api:test#1',
      baseUrl: base,
      apiKey: 'secret-key',
      upstreamModel: 'nano-banana-2',
      http: new UpstreamHttp(guard),
      tmpDir: dir,
      files: s.services.files,
      map: { rename: { aspect_ratio: 'size' }, omit: ['seed'] },
    });
  });
  afterAll(async () => {
    guard.close();
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
    await s.close();
  });

  const job = (input: Record<string, unknown>, extra: Partial<BackendJob> = {}): BackendJob => ({
    taskId: 'tk_1',
    model: 'nano-banana-2',
    kind: 'image',
    input,
    media: {},
    ...extra,
  });
  const env = (data: unknown) => ({ status: 200, json: { code: 200, msg: 'success', data } });
  const fail = (status: number, error: string, msg = 'no') => ({ status, json: { code: status, msg, data: null, error } });

  it('uploads our files first, then creates with an Idempotency-Key, the mapped input and the notify address; a repeat sends the same body', async () => {
    const up = (await upload(s, key, png, 'photo.png')).body.data.url as string;
    let uploads = 0;
    handle = (c) => {
      if (c.path === '/api/v1/files/upload') return (uploads++, env({ url: `${base}/files/up/${uploads}/photo.png` }));
      return env({ taskId: 'up_task_1' });
    };
    const input = { prompt: 'a cat', image_input: [up, 'https://example.com/public.png'], aspect_ratio: '16:9', seed: 7 };
    const withHook = job(input, { webhookUrl: 'https://us.example/upstream/v1/notify/tok' });
    expect(await backend.submit(withHook)).toBe('up_task_1');
    expect(await backend.submit(withHook)).toBe('up_task_1');
    expect(uploads).toBe(1); // remembered for the repeat
    const upCall = seen.find((c) => c.path === '/api/v1/files/upload')!;
    expect(upCall.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
    expect(upCall.headers.authorization).toBe('Bearer secret-key');
    expect(upCall.body.includes(await readFile(png))).toBe(true);
    const creates = seen.filter((c) => c.path === '/api/v1/jobs/createTask');
    expect(creates).toHaveLength(2);
    expect(creates[0]!.headers['idempotency-key']).toBe('gengate-tk_1');
    expect(creates[0]!.body.equals(creates[1]!.body)).toBe(true);
    expect(JSON.parse(creates[0]!.body.toString())).toEqual({
      model: 'nano-banana-2',
      input: { prompt: 'a cat', image_input: [`${base}/files/up/1/photo.png`, 'https://example.com/public.png'], size: '16:9' },
      callBackUrl: 'https://us.example/upstream/v1/notify/tok',
    });
    expect(backend.idempotentSubmit).toBe(true);
  });

  it('sends a draft final as a full render of the merged input, without our draft_task_id', async () => {
    seen.length = 0;
    handle = () => env({ taskId: 'up_final' });
    const merged = { prompt: 'a train', resolution: '1080p', duration: 5, draft: false, draft_task_id: 'tk_our_draft', watermark: true };
    expect(await backend.submit(job(merged, { taskId: 'tk_final', model: 'seedance-2.5', kind: 'video' }))).toBe('up_final');
    const sent = JSON.parse(seen.find((c) => c.path === '/api/v1/jobs/createTask')!.body.toString());
    expect(sent.input).toEqual({ prompt: 'a train', resolution: '1080p', duration: 5, draft: false, watermark: true });
  });

  it('after a restart (uploads forgotten) a repeated submit to a GenGate upstream finds the task its key is bound to', async () => {
    const make = () =>
      new SameApiBackend({
        name: 'gg',
        baseUrl: s.url,
        apiKey: key,
        upstreamModel: 'nano-banana-2',
        http: new UpstreamHttp(guard),
        tmpDir: dir,
        files: s.services.files,
      });
    const up = (await upload(s, key, png, 'ref.png')).body.data.url as string;
    const j = job({ prompt: 'a heron', image_input: [up] }, { taskId: 'tk_restart' });
    const first = await make().submit(j);
    expect(first).toMatch(/^tk_/);
    expect(await make().submit(j)).toBe(first);
    const tasks = await s.services.database.db.selectFrom('tasks').select('id').execute();
    expect(tasks.map((t) => t.id)).toEqual([first]);
  });

  it.each([
    [fail(400, 'nsfw_content_detected', 'nsfw'), 'content'],
    [fail(400, 'invalid_request_error', 'unknown field x'), 'safety'],
    [fail(422, 'validation_error'), 'rejected'],
  ])('a createTask refusal %j is a BackendFailure of kind %s', async (answer, kind) => {
    handle = () => answer;
    const e = await backend.submit(job({ prompt: 'x' }, { taskId: `tk_${kind}` })).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(BackendFailure);
    expect((e as BackendFailure).kind).toBe(kind);
  });

  it.each([[fail(402, 'payment_required')], [fail(429, 'rate_limit_error')], [fail(503, 'server_error')], [fail(505, 'model_disabled')]])(
    'createTask answering %j was not accepted (retry, then the next route)',
    async (answer) => {
      handle = () => answer;
      await expect(backend.submit(job({ prompt: 'x' }))).rejects.toBeInstanceOf(NotAccepted);
    },
  );

  it('an upload refused as a bad file fails the task; an upload that hits an outage is not accepted', async () => {
    const up = (await upload(s, key, png, 'again.png')).body.data.url as string;
    handle = () => fail(422, 'validation_error', 'bad file');
    await expect(backend.submit(job({ image_input: [up] }, { taskId: 'tk_up1' }))).rejects.toBeInstanceOf(BackendFailure);
    handle = () => fail(500, 'server_error');
    await expect(backend.submit(job({ image_input: [up] }, { taskId: 'tk_up2' }))).rejects.toBeInstanceOf(NotAccepted);
  });

  it("cancel is the upstream's POST /api/v1/jobs/cancel: 200 cancelled; 409 and a 404 route not-cancellable; a 503 or no answer unknown", async () => {
    const answers = [
      env({ taskId: 'up_9', state: 'fail', status: 'failed', failCode: 499, refunded: true }),
      fail(409, 'task_not_cancellable', 'task up_9 is already final'),
      fail(404, 'not_found', 'no route'),
      fail(503, 'server_error'),
    ];
    const got: string[] = [];
    for (const a of answers) {
      handle = () => a;
      got.push(await backend.cancel(job({}), 'up_9'));
    }
    expect(got).toEqual(['cancelled', 'not-cancellable', 'not-cancellable', 'unknown']);
    expect(seen.at(-1)).toMatchObject({ method: 'POST', path: '/api/v1/jobs/cancel' });
    expect(seen.at(-1)!.headers.authorization).toBe('Bearer secret-key');
    expect(JSON.parse(seen.at(-1)!.body.toString())).toEqual({ taskId: 'up_9' });
    const gone = new SameApiBackend({
      name: 'same-api:gone#1',
      baseUrl: 'http://127.0.0.1:9',
      apiKey: 'k',
      upstreamModel: 'm',
      http: new UpstreamHttp(guard),
      tmpDir: dir,
      files: s.services.files,
    });
    expect(await gone.cancel(job({}), 'up_9')).toBe('unknown');
  });

  it('maps the upstream states and failCodes back', async () => {
    const answer = (data: Record<string, unknown>) => (handle = () => env({ taskId: 'r', ...data }));
    answer({ state: 'waiting' });
    expect(await backend.progress(job({}), 'r')).toEqual({ state: 'queued' });
    answer({ state: 'generating', progress: 42 });
    expect(await backend.progress(job({}), 'r')).toEqual({ state: 'running', progress: 42 });
    answer({ state: 'fail', failCode: 400, failMsg: 'nsfw', error: { code: 400, message: 'nsfw', type: 'nsfw_content_detected' } });
    expect(await backend.progress(job({}), 'r')).toMatchObject({ state: 'failed', kind: 'content' });
    answer({ state: 'fail', failCode: 504, failMsg: 'slow', error: { type: 'timeout_error' } });
    expect(await backend.progress(job({}), 'r')).toMatchObject({ state: 'failed', kind: 'timeout', message: 'upstream: slow' });
    answer({ state: 'fail', failCode: 503, failMsg: 'down' });
    expect(await backend.progress(job({}), 'r')).toMatchObject({ state: 'failed', kind: 'unavailable' });
    answer({ state: 'fail', failCode: 499, failMsg: 'cancelled', error: { type: 'cancelled' } });
    expect(await backend.progress(job({}), 'r')).toMatchObject({ state: 'failed', kind: 'cancelled' });
    handle = () => fail(404, 'not_found');
    await expect(backend.progress(job({}), 'r')).rejects.toBeInstanceOf(BackendFailure);
    handle = () => fail(500, 'server_error');
    const e = await backend.progress(job({}), 'r').catch((x: unknown) => x);
    expect(e).toBeInstanceOf(Error);
    expect(e).not.toBeInstanceOf(BackendFailure);
  });

  it('downloads a video result object and its last frame; a wrong number of links is an unusable result', async () => {
    const bytes = await readFile(png);
    handle = (c) => {
      if (c.path.startsWith('/out/')) return { status: 200, raw: bytes, type: 'image/png' };
      return env({
        taskId: 'v',
        state: 'success',
        resultJson: { videos: [{ url: `${base}/out/v.mp4` }], duration: 5.04, resultUrls: [`${base}/out/v.mp4`] },
        lastFrameUrl: `${base}/out/f.png`,
      });
    };
    const out = await backend.results(job({}, { kind: 'video' }), 'v');
    expect(out.durationSeconds).toBe(5.04);
    expect(out.files).toHaveLength(1);
    expect((await stat(out.files[0]!.path)).size).toBe(bytes.length);
    expect(out.lastFrame).toBeDefined();
    handle = () => env({ taskId: 'm', state: 'success', resultJson: JSON.stringify({ resultUrls: [`${base}/out/1.mp3`] }) });
    await expect(backend.results(job({}, { kind: 'music' }), 'm')).rejects.toBeInstanceOf(BackendFailure);
  });
});
