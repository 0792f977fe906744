import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { buildServices } from '../../src/services.js';
import { dialects } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { startBytePlusFake } from '../fakes/byteplus.js';
import { startFalFake } from '../fakes/fal.js';
import { startReplicateFake } from '../fakes/replicate.js';
import { startReceiver } from '../callbacks/receiver.js';
import { makeStill } from '../media/helpers.js';
import { startFakeUpstream } from './fake-upstream.js';
import { FAST, create, eventually, expectLedgerInvariant, info, taskEntries } from './support.js';

/**
 * POST /api/v1/jobs/cancel (DECISIONS §22, decision 1901) against every backend kind: the local one
 * and a fake of each provider playing its documented cancel answers. The engine is driven by hand
 * (tick), so each test decides where the task is when the cancel comes.
 */
describe.each(dialects())('cancel on %s', (dialect) => {
  let s: TestServer;
  let scratch = '';
  let fal: Awaited<ReturnType<typeof startFalFake>>;
  let replicate: Awaited<ReturnType<typeof startReplicateFake>>;
  let byteplus: Awaited<ReturnType<typeof startBytePlusFake>>;
  let upstream: Awaited<ReturnType<typeof startFakeUpstream>>;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  /** While set, the fal fake holds its answers to submits until it resolves. */
  let hold: Promise<void> | null = null;
  let env: Record<string, string> = {};

  beforeAll(async () => {
    scratch = mkdtempSync(path.join(tmpdir(), 'gengate-cancel-'));
    const png = await makeStill(path.join(scratch, 'image.png'));
    // Jobs that never finish on their own: a test moves them by hand where it needs to.
    fal = await startFalFake('fal-c', (_m, base) => ({ images: [{ url: `${base}/media/x.png` }] }), {
      finishAfterMs: 3_600_000,
      beforeSubmit: async () => hold ?? undefined,
    });
    replicate = await startReplicateFake('r8_c', (_m, base) => `${base}/media/x.mp4`, { finishAfterMs: 3_600_000 });
    byteplus = await startBytePlusFake('ark-c', { video: 'x.mp4', frame: 'x.png', image: 'x.jpg' }, { finishAfterMs: 3_600_000 });
    upstream = await startFakeUpstream(png);
    upstream.state.mode = 'ok';
    upstream.state.taskState = 'generating';
    receiver = await startReceiver(() => 200);
    const catalog = path.join(scratch, 'catalog.json');
    writeFileSync(
      catalog,
      JSON.stringify({
        models: {
          'google/nano-banana': { routes: [{ backend: 'fal', model: 'fal-ai/nano-banana', base_url: fal.url, key_env: 'C_FAL_KEY' }] },
          'wan-2.7': { routes: [{ backend: 'replicate', model: 'wan-video/wan-2.7', base_url: replicate.url, key_env: 'C_R8_KEY' }] },
          'seedance-1.5-pro': { routes: [{ backend: 'byteplus', model: 'seedance-1-5-pro-251215', base_url: byteplus.url, key_env: 'C_ARK_KEY' }] },
          'nano-banana-2': { routes: [{ backend: 'same-api', base_url: upstream.url, key_env: 'C_UP_KEY' }] },
        },
      }),
    );
    env = {
      ...FAST,
      // Local jobs stay queued (the test is about where the cancel finds them).
      LOCAL_QUEUE_MS: '600000',
      GENGATE_CATALOG: catalog,
      ALLOW_PRIVATE_NETWORK: 'true',
      UPSTREAM_POLL_MS: '20',
      BACKEND_CALL_TIMEOUT_MS: '3000',
      C_FAL_KEY: 'fal-c',
      C_R8_KEY: 'r8_c',
      C_ARK_KEY: 'ark-c',
      C_UP_KEY: 'up-c',
    };
    s = await startServer(dialect, env);
    s.services.callbacks.start();
  });
  afterAll(async () => {
    await s?.close();
    await Promise.all([fal?.close(), replicate?.close(), byteplus?.close(), upstream?.close(), receiver?.close()]);
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  const cancel = (key: string, taskId: unknown) => s.call('POST', '/api/v1/jobs/cancel', { key, body: { taskId } });
  /** Steps the engine until the task is handed to its backend. */
  const handed = (key: string, id: string) =>
    eventually(async () => {
      await s.services.engine.tick();
      const t = await info(s, key, id);
      return t.state === 'queuing' || t.state === 'generating' ? t : null;
    });
  const events = async (id: string) =>
    (await s.services.database.db.selectFrom('task_events').select('to_state').where('task_id', '=', id).orderBy('id').execute()).map((e) => e.to_state);
  /** The task is failed 499, refunded exactly once, and the ledger holds. */
  async function expectCancelled(key: string, id: string) {
    const t = await info(s, key, id);
    expect([t.state, t.status, t.failCode, t.error?.type, t.refunded]).toEqual(['fail', 'failed', 499, 'cancelled', true]);
    const entries = await taskEntries(s, id);
    expect(entries.refund).toBe(-entries.charge!);
    const rows = await s.services.database.db.selectFrom('ledger_entries').select('kind').where('task_id', '=', id).execute();
    expect(rows.map((r) => r.kind).sort()).toEqual(['charge', 'refund']);
    await expectLedgerInvariant(s.services.database);
  }
  /** The task is untouched by a refused cancel: still where it was, charged, not refunded. */
  async function expectRunsOn(key: string, id: string, state: string) {
    const t = await info(s, key, id);
    expect(t.state).toBe(state);
    expect(await taskEntries(s, id)).toEqual({ charge: expect.any(Number) });
  }

  it('a waiting task fails at once with 499 cancelled, refunded once; a second cancel is 409', async () => {
    const acc = await s.account(1);
    const id = await create(s, acc.key, 'seedream-flash', { prompt: 'never started' });
    const before = await s.services.accounts.balanceMicros(acc.id);
    const r = await cancel(acc.key, id);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toEqual({ code: 200, msg: 'success', data: { taskId: id, state: 'fail', status: 'failed', failCode: 499, refunded: true } });
    await expectCancelled(acc.key, id);
    expect(await s.services.accounts.balanceMicros(acc.id)).toBe(before - (await taskEntries(s, id)).charge!);
    expect(await events(id)).toEqual(['waiting', 'fail']);
    const again = await cancel(acc.key, id);
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ code: 409, error: 'task_not_cancellable', data: null });
    expect(again.body.msg).toContain('already final: it failed (failCode 499)');
    // The engine never picks it up again.
    await s.services.engine.tick();
    await expectCancelled(acc.key, id);
  });

  it('a task that succeeded is 409 and keeps its result and its charge', async () => {
    const acc = await s.account(1);
    const id = await create(s, acc.key, 'seedream-flash', { prompt: 'finished first' });
    await s.services.database.tx((w) => w.updateTable('tasks').set({ state: 'success', completed_at: Date.now() }).where('id', '=', id).execute());
    const r = await cancel(acc.key, id);
    expect(r.status).toBe(409);
    expect(r.body.msg).toMatch(/already final: it succeeded; only a task that is waiting, queuing or generating can be cancelled/);
    expect(await taskEntries(s, id)).toEqual({ charge: expect.any(Number) });
  });

  it("another account's task is 404 task_not_found, as recordInfo answers; a missing taskId is 422; a key without tasks:write is 403", async () => {
    const owner = await s.account(1);
    const other = await s.account(1);
    const id = await create(s, owner.key, 'seedream-flash', { prompt: 'not yours' });
    const foreign = await cancel(other.key, id);
    const read = await s.call('GET', `/api/v1/jobs/recordInfo?taskId=${id}`, { key: other.key });
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual(read.body);
    expect((await cancel(owner.key, 'tk_nosuchtask')).body).toMatchObject({ code: 404, error: 'task_not_found' });
    const missing = await s.call('POST', '/api/v1/jobs/cancel', { key: owner.key, body: {} });
    expect(missing.status).toBe(422);
    expect(missing.body.msg).toContain('taskId is required');
    expect((await cancel(owner.key, 42)).status).toBe(400);
    const reader = await s.services.accounts.createKey(owner.id, { scopes: ['tasks:read'] });
    const refused = await cancel(reader.apiKey, id);
    expect(refused.status).toBe(403);
    expect(refused.body.msg).toContain('tasks:write');
    await expectRunsOn(owner.key, id, 'waiting');
  });

  it('local: a queued task is cancelled (nothing is billed), failed and refunded', async () => {
    const acc = await s.account(1);
    const id = await create(s, acc.key, 'seedream-flash', { prompt: 'local queued' });
    expect((await handed(acc.key, id)).state).toBe('queuing');
    expect((await cancel(acc.key, id)).status).toBe(200);
    await expectCancelled(acc.key, id);
    expect(await events(id)).toEqual(['waiting', 'queuing', 'fail']);
  });

  it('fal: PUT cancel answers 202 → refunded; 400 ALREADY_COMPLETED → 409 and the task runs on', async () => {
    const acc = await s.account(1);
    const id = await create(s, acc.key, 'google/nano-banana', { prompt: 'fal cancel' });
    await handed(acc.key, id);
    const [request] = [...fal.requests.entries()].filter(([, r]) => r.prompt === 'fal cancel').map(([rid]) => rid);
    expect((await cancel(acc.key, id)).status).toBe(200);
    expect(fal.calls.filter((c) => c.method === 'PUT' && c.path.endsWith(`/requests/${request}/cancel`))).toHaveLength(1);
    expect(fal.requests.get(request!)?.cancelled).toBe(true);
    await expectCancelled(acc.key, id);

    const late = await create(s, acc.key, 'google/nano-banana', { prompt: 'fal too late' });
    await handed(acc.key, late);
    const [done] = [...fal.requests.entries()].filter(([, r]) => r.prompt === 'fal too late').map(([, r]) => r);
    done!.done = true;
    const r = await cancel(acc.key, late);
    expect(r.status).toBe(409);
    expect(r.body.msg).toContain('answered that it cannot cancel it now');
    expect(r.body.msg).toContain('the task runs on');
    await expectRunsOn(acc.key, late, 'queuing');
  });

  it('Replicate: POST cancel answers the prediction canceled → refunded; succeeded → 409', async () => {
    const acc = await s.account(5);
    const id = await create(s, acc.key, 'wan-2.7', { prompt: 'replicate cancel', duration: 5, resolution: '480p' });
    const t = await handed(acc.key, id);
    expect(t.state).toBe('queuing');
    expect((await cancel(acc.key, id)).status).toBe(200);
    const cancels = replicate.calls.filter((c) => c.method === 'POST' && c.path.endsWith('/cancel'));
    expect(cancels).toHaveLength(1);
    expect(replicate.predictions.get(cancels[0]!.path.split('/')[3]!)?.view.status).toBe('canceled');
    await expectCancelled(acc.key, id);

    const late = await create(s, acc.key, 'wan-2.7', { prompt: 'replicate too late', duration: 5, resolution: '480p' });
    await handed(acc.key, late);
    const [p] = [...replicate.predictions.values()].filter((x) => x.prompt === 'replicate too late');
    p!.view.status = 'succeeded';
    expect((await cancel(acc.key, late)).status).toBe(409);
    await expectRunsOn(acc.key, late, 'queuing');
  });

  it('BytePlus ModelArk: a queued task is deleted → refunded; a running one cannot be cancelled → 409', async () => {
    const acc = await s.account(5);
    const id = await create(s, acc.key, 'seedance-1.5-pro', { prompt: 'ark cancel', duration: 4, resolution: '480p' });
    await handed(acc.key, id);
    expect((await cancel(acc.key, id)).status).toBe(200);
    const deletes = byteplus.calls.filter((c) => c.method === 'DELETE');
    expect(deletes).toHaveLength(1);
    expect(byteplus.tasks.get(decodeURIComponent(deletes[0]!.path.split('/').pop()!))?.status).toBe('cancelled');
    await expectCancelled(acc.key, id);

    const running = await create(s, acc.key, 'seedance-1.5-pro', { prompt: 'ark running', duration: 4, resolution: '480p' });
    await handed(acc.key, running);
    const [task] = [...byteplus.tasks.values()].filter((x) => x.prompt === 'ark running');
    task!.status = 'running';
    const r = await cancel(acc.key, running);
    expect(r.status).toBe(409);
    // Never a DELETE for a task that is not queued: on a finished one it would delete the record.
    expect(byteplus.calls.filter((c) => c.method === 'DELETE')).toHaveLength(1);
    expect((await info(s, acc.key, running)).state).not.toBe('fail');
    expect(await taskEntries(s, running)).toEqual({ charge: expect.any(Number) });
  });

  it("same API: the upstream's own jobs/cancel → refunded; its 409, a 404 route and a 503 → 409 and the task runs on", async () => {
    const acc = await s.account(5);
    upstream.state.taskState = 'generating';
    upstream.state.cancel = 'ok';
    const id = await create(s, acc.key, 'nano-banana-2', { prompt: 'same api cancel' });
    await handed(acc.key, id);
    expect((await cancel(acc.key, id)).status).toBe(200);
    expect(upstream.cancels).toHaveLength(1);
    await expectCancelled(acc.key, id);

    upstream.state.taskState = 'generating';
    for (const mode of ['final', 'none', 'down'] as const) {
      upstream.state.cancel = mode;
      const other = await create(s, acc.key, 'nano-banana-2', { prompt: `same api ${mode}` });
      const t = await handed(acc.key, other);
      const r = await cancel(acc.key, other);
      expect(r.status, mode).toBe(409);
      expect(r.body.msg).toContain(mode === 'down' ? 'gave no clear answer' : 'answered that it cannot cancel');
      await expectRunsOn(acc.key, other, t.state);
    }
  });

  it('a task on a route this server does not know (removed from the catalog) is 409 and runs on', async () => {
    const acc = await s.account(1);
    const id = await create(s, acc.key, 'google/nano-banana', { prompt: 'route gone' });
    await handed(acc.key, id);
    await s.services.database.tx((w) => w.updateTable('tasks').set({ backend: 'fal:removed#9' }).where('id', '=', id).execute());
    const r = await cancel(acc.key, id);
    expect(r.status).toBe(409);
    expect(r.body.msg).toContain('on the route fal:removed#9, which this server cannot reach');
    await expectRunsOn(acc.key, id, 'queuing');
  });

  it('a cancel while a worker is mid-submit fails the task at once; the worker loses its compare-and-set and cancels its orphaned upstream job', async () => {
    const acc = await s.account(1);
    const id = await create(s, acc.key, 'google/nano-banana', { prompt: 'mid submit' });
    // The tasks of earlier tests are still polled: they are put out of the way, so this tick claims this task.
    await s.services.database.tx((w) =>
      w
        .updateTable('tasks')
        .set({ run_at: Date.now() + 3_600_000 })
        .where('id', '!=', id)
        .where('state', 'in', ['waiting', 'queuing', 'generating'])
        .execute(),
    );
    let answer = () => {};
    hold = new Promise<void>((resolve) => (answer = resolve));
    const stepping = s.services.engine.tick();
    const submits = () => fal.calls.filter((c) => c.method === 'POST' && (c.json as { prompt?: string })?.prompt === 'mid submit');
    await eventually(async () => submits().length === 1);
    // The worker holds the lease and has recorded the hand-off; the upstream has not answered yet.
    const row = await s.services.database.db.selectFrom('tasks').select(['state', 'locked_by', 'handed_at']).where('id', '=', id).executeTakeFirstOrThrow();
    expect(row.state).toBe('waiting');
    expect(row.locked_by).not.toBeNull();
    expect(row.handed_at).not.toBeNull();
    expect((await cancel(acc.key, id)).status).toBe(200);
    hold = null;
    answer();
    await stepping;
    const [request] = [...fal.requests.entries()].filter(([, r]) => r.prompt === 'mid submit').map(([rid]) => rid);
    expect(fal.requests.get(request!)?.cancelled).toBe(true);
    expect(submits()).toHaveLength(1);
    await expectCancelled(acc.key, id);
    expect(await events(id)).toEqual(['waiting', 'fail']);
  });

  it('an API-only process (no engine, no upstream adapters built at start) builds the route on the first cancel that needs it', async () => {
    const api = await buildServices(loadConfig({ ...env, DATABASE_URL: s.db.url, DATA_DIR: s.db.dir, LOG_LEVEL: 'silent', ROLE: 'api' }), { upstreams: false });
    try {
      const acc = await s.account(1);
      const id = await create(s, acc.key, 'google/nano-banana', { prompt: 'api process cancel' });
      await handed(acc.key, id);
      expect(await api.tasks.cancel(acc.id, id)).toMatchObject({ taskId: id, state: 'fail', failCode: 499 });
      const [request] = [...fal.requests.values()].filter((r) => r.prompt === 'api process cancel');
      expect(request?.cancelled).toBe(true);
      await expectCancelled(acc.key, id);
    } finally {
      await api.close();
    }
  });

  it('a cancelled task with a callBackUrl is delivered like any failure', async () => {
    const acc = await s.account(1);
    const id = await create(s, acc.key, 'seedream-flash', { prompt: 'call me back' }, { callBackUrl: `${receiver.url}/hook` });
    expect((await cancel(acc.key, id)).status).toBe(200);
    const got = await eventually(async () => receiver.at('/hook')[0]);
    const body = JSON.parse(got!.body);
    expect(body).toMatchObject({ code: 501, taskId: id, data: { state: 'fail', failCode: 499, callbackType: 'task_failed', error: { type: 'cancelled' } } });
    expect(body.msg).toContain('cancelled');
    await eventually(async () => (await info(s, acc.key, id)).callback?.status === 'delivered');
  });

  it('MCP cancel_task answers what the route answers', async () => {
    const acc = await s.account(1);
    const id = await create(s, acc.key, 'seedream-flash', { prompt: 'via mcp' });
    const client = new Client({ name: 'gengate-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${acc.key}` } } }));
    type Result = { isError?: boolean; structuredContent?: any; content: Array<{ text: string }> };
    const rpc = async (args: Record<string, unknown>) => (await client.callTool({ name: 'cancel_task', arguments: args })) as Result;
    const r = await rpc({ taskId: id });
    expect(r.isError).toBeFalsy();
    expect(r.structuredContent).toEqual({ taskId: id, state: 'fail', status: 'failed', failCode: 499, refunded: true });
    await expectCancelled(acc.key, id);
    const again = await rpc({ taskId: id });
    expect(again.isError).toBe(true);
    expect(again.content[0]!.text).toContain('already final');
    await client.close();
  });
});
