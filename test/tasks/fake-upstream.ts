import { mkdtempSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { renderImage } from '../../src/backends/local/render.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { FAST } from './support.js';

/** One createTask the fake received. */
export interface FakeCreate {
  key: string | undefined;
  auth: string | undefined;
  body: any;
}

/**
 * A small stand-in for an upstream speaking SPEC.md's API (the external service of a same-api
 * route), on 127.0.0.1: `mode` decides how createTask answers; accepted tasks report `taskState`
 * and, on success, one PNG result served by the fake itself. POST /api/v1/jobs/cancel answers by
 * `cancel` as GenGate does (decision 1901): `ok` (200, the task is failed there with failCode 499),
 * `final` (409 task_not_cancellable), `none` (404 not_found: a service without cancel), `down` (503).
 */
export async function startFakeUpstream(png: string) {
  const image = await readFile(png);
  const creates: FakeCreate[] = [];
  const tasks = new Map<string, string>();
  /** The taskId of every cancel received. */
  const cancels: string[] = [];
  const state = {
    mode: 'down' as 'down' | 'ok' | 'slow-429',
    taskState: 'success' as 'success' | 'generating' | 'fail',
    recordInfos: 0,
    cancel: 'ok' as 'ok' | 'final' | 'none' | 'down',
    /** While set, recordInfo answers wait for it (with the state as it was when the request arrived). */
    hold: null as Promise<void> | null,
    /** While set, createTask answers wait for it (the create is recorded in `creates` on arrival). */
    createHold: null as Promise<void> | null,
  };
  let base = '';
  const send = (res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) =>
    res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', base);
      if (url.pathname === '/out/result.png') return res.writeHead(200, { 'content-type': 'image/png' }).end(image);
      if (url.pathname === '/api/v1/jobs/createTask') {
        const key = req.headers['idempotency-key'] as string | undefined;
        creates.push({ key, auth: req.headers.authorization, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
        if (state.mode === 'down') return send(res, 503, { code: 503, msg: 'down for maintenance', data: null, error: 'server_error' });
        if (state.mode === 'slow-429') return send(res, 429, { code: 429, msg: 'slow down', data: null, error: 'rate_limit_error' }, { 'retry-after': '0' });
        const id = (key && tasks.has(key) ? key : undefined) ?? `up_${creates.length}`;
        tasks.set(key ?? id, id);
        const accept = () => send(res, 200, { code: 200, msg: 'success', data: { taskId: tasks.get(key ?? id) } });
        if (state.createHold) return void state.createHold.then(accept);
        return accept();
      }
      if (url.pathname === '/api/v1/jobs/cancel' && req.method === 'POST') {
        const taskId = String((JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as { taskId?: unknown }).taskId);
        cancels.push(taskId);
        if (state.cancel === 'none') return send(res, 404, { code: 404, msg: 'no route POST /api/v1/jobs/cancel', data: null, error: 'not_found' });
        if (state.cancel === 'down') return send(res, 503, { code: 503, msg: 'down for maintenance', data: null, error: 'server_error' });
        if (state.cancel === 'final')
          return send(res, 409, { code: 409, msg: `task ${taskId} is already final: it succeeded`, data: null, error: 'task_not_cancellable' });
        state.taskState = 'fail';
        return send(res, 200, { code: 200, msg: 'success', data: { taskId, state: 'fail', status: 'failed', failCode: 499, refunded: true } });
      }
      if (url.pathname === '/api/v1/jobs/recordInfo') {
        state.recordInfos++;
        const now = state.taskState;
        if (state.hold) return void state.hold.then(() => answerRecord(res, url, now));
        return answerRecord(res, url, now);
      }
      send(res, 404, { code: 404, msg: 'no route', data: null, error: 'not_found' });
    });
  });
  /** recordInfo as it was when the request arrived. */
  function answerRecord(res: http.ServerResponse, url: URL, taskState: typeof state.taskState) {
    const data: Record<string, unknown> = { taskId: url.searchParams.get('taskId'), state: taskState, progress: taskState === 'success' ? 100 : 40 };
    if (taskState === 'success') data.resultJson = JSON.stringify({ resultUrls: [`${base}/out/result.png`] });
    if (taskState === 'fail')
      Object.assign(data, { failCode: 501, failMsg: 'the model gave up', error: { code: 501, message: 'the model gave up', type: 'server_error' } });
    send(res, 200, { code: 200, msg: 'success', data });
  }
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  return {
    url: base,
    creates,
    cancels,
    state,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export type FakeUpstream = Awaited<ReturnType<typeof startFakeUpstream>>;

/**
 * A fake upstream that accepts tasks (mode `ok`; a rendered PNG is their result), and the settings
 * of a catalog file in `dir` whose `nano-banana-2` has its one route there (same-api, key in UP_KEY,
 * loopback allowed): spread `env` into the server's settings.
 */
export async function sameApiUpstream(
  dir = mkdtempSync(path.join(tmpdir(), 'gengate-upstream-')),
): Promise<{ fake: FakeUpstream; env: Record<string, string> }> {
  const png = path.join(dir, 'r.png');
  await renderImage({ format: 'png', prompt: 'upstream result' }, png);
  const fake = await startFakeUpstream(png);
  fake.state.mode = 'ok';
  const catalog = path.join(dir, 'catalog.json');
  writeFileSync(catalog, JSON.stringify({ models: { 'nano-banana-2': { routes: [{ backend: 'same-api', base_url: fake.url, key_env: 'UP_KEY' }] } } }));
  return { fake, env: { GENGATE_CATALOG: catalog, UP_KEY: 'k', ALLOW_PRIVATE_NETWORK: 'true' } };
}

/** A server (FAST settings, `env` added) whose nano-banana-2 goes to a fresh sameApiUpstream, its engine started. */
export async function serverWithUpstream(dialect: 'sqlite' | 'postgres', env: Record<string, string>): Promise<{ s: TestServer; fake: FakeUpstream }> {
  const { fake, env: routed } = await sameApiUpstream();
  const s = await startServer(dialect, { ...FAST, ...routed, ...env });
  s.services.engine.start();
  return { s, fake };
}

/** The notice token GenGate gave the fake upstream with task `id` (from its callBackUrl). */
export function noticeToken(fake: FakeUpstream, id: string): string {
  return /notify\/([A-Za-z0-9_-]+)$/.exec(fake.creates.find((c) => c.key === `gengate-${id}`)!.body.callBackUrl)![1]!;
}

/** Posts an upstream's completion notice for `token` to the server's notify address. */
export function postNotice(s: TestServer, token: string, body = '{}', type = 'application/json'): Promise<Response> {
  return fetch(`${s.url}/upstream/v1/notify/${token}`, { method: 'POST', body, headers: { 'content-type': type } });
}
