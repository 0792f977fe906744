import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers/db.js';
import { gengate } from '../helpers/cli.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { startReceiver } from '../callbacks/receiver.js';
import { FAST, create, eventually, info, settle } from './support.js';

/**
 * The kie dialect of results (DECISIONS §18, decision 0402): a task created under a kie.ai id, or
 * by an account the operator set to `kie` (CLI, admin API), reports resultJson as a JSON string
 * for every model, in recordInfo, list, callbacks and MCP; every other task keeps the SPEC shape.
 */

const ADMIN = 'admin-token-for-dialect-0123';
/** One video model, under its kie.ai id and its GenGate id (same input, kie.ai names and GenGate names). */
const KIE_VIDEO = { model: 'grok-imagine/text-to-video', input: { prompt: 'a cat surfs', resolution: '480p', duration: '6', mode: 'normal' } };
const GG_VIDEO = { model: 'grok-imagine', input: { prompt: 'a cat surfs', resolution: '480p', duration: 6 } };

type Receiver = Awaited<ReturnType<typeof startReceiver>>;

/** A kie-dialect video resultJson: text that parses to exactly resultUrls, videos and duration, all naming the same file. */
function expectKieVideo(resultJson: unknown): void {
  expect(typeof resultJson, JSON.stringify(resultJson)).toBe('string');
  const parsed = JSON.parse(resultJson as string);
  expect(Object.keys(parsed).sort()).toEqual(['duration', 'resultUrls', 'videos']);
  expect(parsed.resultUrls).toHaveLength(1);
  expect(parsed.videos).toEqual([{ url: parsed.resultUrls[0] }]);
  expect(parsed.duration).toBeGreaterThan(0);
}

/** The SPEC video shape: an object. */
function expectGenGateVideo(resultJson: unknown): void {
  expect(resultJson).toMatchObject({ videos: [{ url: expect.any(String) }], duration: expect.any(Number), resultUrls: [expect.any(String)] });
}

describe.each(dialects())('the kie dialect of results on %s', (dialect) => {
  let s: TestServer;
  let r: Receiver;
  beforeAll(async () => {
    r = await startReceiver(() => 200);
    // AUTH_CACHE_MS=0: a dialect set by the CLI (another process) applies to the next request.
    s = await startServer(dialect, { ...FAST, ALLOW_PRIVATE_NETWORK: 'true', ADMIN_TOKEN: ADMIN, AUTH_CACHE_MS: '0' });
    s.services.engine.start();
    s.services.callbacks.start();
  });
  afterAll(async () => {
    await s.close();
    await r.close();
  });

  const admin = (method: string, path: string, body?: unknown) => s.call(method, path, { body, headers: { authorization: `Bearer ${ADMIN}` } });
  /** The task's item in the list (read from the database, never from the finished-view cache). */
  const listed = async (key: string, id: string) => {
    const page = await s.call('GET', '/api/v1/jobs/list?limit=100', { key });
    expect(page.status).toBe(200);
    return (page.body.data.items as Array<{ taskId: string; resultJson: unknown }>).find((t) => t.taskId === id)!;
  };
  /** The body of the callback delivered for the task. */
  const callbackData = async (id: string) => {
    const body = await eventually(() => r.received.find((x) => JSON.parse(x.body).taskId === id)?.body, 20_000, `the callback of ${id}`);
    return JSON.parse(body!).data;
  };
  /** get_task and the task's list_tasks item through MCP. */
  const viaMcp = async (key: string, id: string) => {
    const client = new Client({ name: 'gengate-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
    try {
      const got = (await client.callTool({ name: 'get_task', arguments: { taskId: id } })) as { structuredContent: any };
      const list = (await client.callTool({ name: 'list_tasks', arguments: { limit: 100 } })) as { structuredContent: any };
      return { task: got.structuredContent, item: list.structuredContent.items.find((t: { taskId: string }) => t.taskId === id) };
    } finally {
      await client.close();
    }
  };
  const dialectOf = async (id: string) =>
    (await s.services.database.db.selectFrom('tasks').select('dialect').where('id', '=', id).executeTakeFirstOrThrow()).dialect;

  it('a video task under a kie.ai id: resultJson is a JSON string in recordInfo, list, the callback and MCP', async () => {
    const a = await s.account(20);
    const id = await create(s, a.key, KIE_VIDEO.model, KIE_VIDEO.input, { callBackUrl: `${r.url}/kie` });
    const done = await settle(s, a.key, id);
    expect(done).toMatchObject({ state: 'success', model: 'grok-imagine' });
    expectKieVideo(done.resultJson);
    expect(await dialectOf(id)).toBe('kie');
    // The same view everywhere: the second recordInfo comes from the finished-view cache.
    expect((await info(s, a.key, id)).resultJson).toBe(done.resultJson);
    expect((await listed(a.key, id)).resultJson).toBe(done.resultJson);
    const data = await callbackData(id);
    expect(data.resultJson).toBe(done.resultJson);
    const mcp = await viaMcp(a.key, id);
    expect(mcp.task.resultJson).toBe(done.resultJson);
    expect(mcp.item.resultJson).toBe(done.resultJson);
    // An image under a kie.ai id: the string it always was.
    const image = await settle(s, a.key, await create(s, a.key, 'google/nano-banana', { prompt: 'a red apple' }));
    expect(Object.keys(JSON.parse(image.resultJson))).toEqual(['resultUrls']);
  });

  it('a video task under a GenGate id is unchanged: an object everywhere', async () => {
    const a = await s.account(20);
    const id = await create(s, a.key, GG_VIDEO.model, GG_VIDEO.input, { callBackUrl: `${r.url}/gengate` });
    const done = await settle(s, a.key, id);
    expect(await dialectOf(id)).toBe('gengate');
    expectGenGateVideo(done.resultJson);
    expectGenGateVideo((await listed(a.key, id)).resultJson);
    const data = await callbackData(id);
    expectGenGateVideo(data.resultJson);
    const mcp = await viaMcp(a.key, id);
    expectGenGateVideo(mcp.task.resultJson);
    expectGenGateVideo(mcp.item.resultJson);
  });

  it('an account set to kie by the admin API: its GenGate-id tasks from then on get a string; earlier tasks keep their shape', async () => {
    const a = await s.account(20);
    expect((await admin('GET', `/admin/v1/accounts/${a.id}`)).body.data.dialect).toBe('gengate');
    const before = await settle(s, a.key, await create(s, a.key, GG_VIDEO.model, GG_VIDEO.input));
    expectGenGateVideo(before.resultJson);

    const set = await admin('POST', `/admin/v1/accounts/${a.id}/dialect`, { dialect: 'kie' });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    expect(set.body.data).toMatchObject({ id: a.id, dialect: 'kie' });
    expect((await admin('GET', '/admin/v1/accounts')).body.data.find((x: { id: string }) => x.id === a.id).dialect).toBe('kie');

    const id = await create(s, a.key, GG_VIDEO.model, GG_VIDEO.input, { callBackUrl: `${r.url}/admin-kie` });
    const after = await settle(s, a.key, id);
    expect(after.model).toBe('grok-imagine');
    expectKieVideo(after.resultJson);
    expect((await listed(a.key, id)).resultJson).toBe(after.resultJson);
    expect((await callbackData(id)).resultJson).toBe(after.resultJson);
    expect((await viaMcp(a.key, id)).task.resultJson).toBe(after.resultJson);
    // The earlier task was fixed at its creation (decision 0402).
    expectGenGateVideo((await listed(a.key, before.taskId)).resultJson);
    expectGenGateVideo((await info(s, a.key, before.taskId)).resultJson);

    // Back to gengate: new tasks are objects again, the kie task stays text.
    expect((await admin('POST', `/admin/v1/accounts/${a.id}/dialect`, { dialect: 'gengate' })).body.data.dialect).toBe('gengate');
    const again = await settle(s, a.key, await create(s, a.key, GG_VIDEO.model, GG_VIDEO.input));
    expectGenGateVideo(again.resultJson);
    expectKieVideo((await listed(a.key, id)).resultJson);
  });

  it('the admin API refuses a bad dialect with 400 naming the field and the allowed values, and changes nothing', async () => {
    const a = await s.account(1);
    for (const body of [{ dialect: 'kie.ai' }, { dialect: 'KIE' }, { dialect: 7 }, { dialect: null }]) {
      const bad = await admin('POST', `/admin/v1/accounts/${a.id}/dialect`, body);
      expect(bad.status, JSON.stringify(body)).toBe(400);
      expect(bad.body).toMatchObject({ code: 400, error: 'invalid_request_error' });
      expect(bad.body.msg).toMatch(/^dialect: must be one of "gengate", "kie" \(got .+\)$/);
    }
    const extra = await admin('POST', `/admin/v1/accounts/${a.id}/dialect`, { dialect: 'kie', shape: 'string' });
    expect(extra.status).toBe(400);
    expect(extra.body.msg).toMatch(/shape/);
    const missing = await admin('POST', `/admin/v1/accounts/${a.id}/dialect`, {});
    expect(missing.status).toBeGreaterThanOrEqual(400);
    expect(missing.status).toBeLessThan(500);
    expect(missing.body.msg).toMatch(/dialect/);
    const unknown = await admin('POST', '/admin/v1/accounts/acc_missing/dialect', { dialect: 'kie' });
    expect(unknown.status).toBe(404);
    expect((await admin('GET', `/admin/v1/accounts/${a.id}`)).body.data.dialect).toBe('gengate');
  });

  it('an account set to kie by the CLI: its GenGate-id tasks get a string; a bad value is refused naming the allowed ones', async () => {
    const a = await s.account(20);
    const env = { DATABASE_URL: s.db.url, DATA_DIR: s.db.dir };
    // The refused change and the look that shows nothing changed run side by side: each run of the CLI is a new process.
    const [bad, before] = await Promise.all([gengate(['account', 'dialect', a.id, 'kieai', '--json'], env), gengate(['account', 'show', a.id, '--json'], env)]);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('dialect must be one of "gengate", "kie" (got "kieai")');
    expect(JSON.parse(before.stdout).account.dialect).toBe('gengate');

    const set = await gengate(['account', 'dialect', a.id, 'kie', '--json'], env);
    expect(set.code, set.stderr).toBe(0);
    expect(JSON.parse(set.stdout).account).toMatchObject({ id: a.id, dialect: 'kie' });
    const [list, shown, done] = await Promise.all([
      gengate(['account', 'list', '--json'], env),
      gengate(['account', 'show', a.id], env),
      create(s, a.key, GG_VIDEO.model, GG_VIDEO.input).then((id) => settle(s, a.key, id)),
    ]);
    expect(JSON.parse(list.stdout).accounts.find((x: { id: string }) => x.id === a.id).dialect).toBe('kie');
    expect(shown.stdout).toContain('(dialect kie)');
    expectKieVideo(done.resultJson);
    // Five runs of the CLI, each a new Node process loading the sources through tsx: seconds each on a busy machine.
  }, 240_000);

  it('with keys remembered (AUTH_CACHE_MS), a dialect set through the admin API applies to the next task of that server', async () => {
    const cached = await startServer(dialect, { ADMIN_TOKEN: ADMIN, AUTH_CACHE_MS: '60000' });
    try {
      const a = await cached.account(20);
      const stored = async (id: string) =>
        (await cached.services.database.db.selectFrom('tasks').select('dialect').where('id', '=', id).executeTakeFirstOrThrow()).dialect;
      expect(await stored(await create(cached, a.key, GG_VIDEO.model, GG_VIDEO.input))).toBe('gengate');
      const set = await cached.call('POST', `/admin/v1/accounts/${a.id}/dialect`, { body: { dialect: 'kie' }, headers: { authorization: `Bearer ${ADMIN}` } });
      expect(set.status).toBe(200);
      expect(await stored(await create(cached, a.key, GG_VIDEO.model, GG_VIDEO.input))).toBe('kie');
    } finally {
      await cached.close();
    }
  });
});
