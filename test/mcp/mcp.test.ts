import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/http/app.js';
import { buildServices } from '../../src/services.js';
import { dialects } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { FAST } from '../tasks/support.js';

/** /mcp with the SDK's own client over real HTTP: public tools, keyed tools, errors with the REST API's msg. */

/** A client of /mcp with the key, or of /mcp/public without one. */
async function connect(url: string, key?: string): Promise<Client> {
  const client = new Client({ name: 'gengate-test', version: '1.0.0' });
  const headers: Record<string, string> = key ? { authorization: `Bearer ${key}` } : {};
  await client.connect(new StreamableHTTPClientTransport(new URL(key ? `${url}/mcp` : `${url}/mcp/public`), { requestInit: { headers } }));
  return client;
}

/** Calls a tool; returns its structured content and whether it is an error, plus the text. */
async function call(client: Client, name: string, args: Record<string, unknown> = {}, onprogress?: (p: { progress: number; message?: string }) => void) {
  const r = (await client.callTool({ name, arguments: args }, undefined, onprogress ? { onprogress } : {})) as {
    isError?: boolean;
    structuredContent?: any;
    content: Array<{ type: string; text: string }>;
  };
  return { error: r.isError === true, data: r.structuredContent, text: r.content[0]!.text };
}

for (const dialect of dialects()) {
  describe(`MCP at /mcp (${dialect})`, () => {
    let s: TestServer;
    let anon: Client;
    beforeAll(async () => {
      s = await startServer(dialect, { ...FAST, PRICING_BASE_URL: 'https://prices.example.com' });
      anon = await connect(s.url);
    });
    afterAll(async () => {
      await anon.close();
      await s.close();
    });

    it('lists the public tools without a key, and with a key the keyed tools its scopes allow; create_task is compact', async () => {
      const publicTools = ['calculate_price', 'get_model', 'get_price_list', 'list_models'];
      expect((await anon.listTools()).tools.map((t) => t.name).sort()).toEqual(publicTools);
      const a = await s.account(1);
      const full = await connect(s.url, a.key);
      const { tools } = await full.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual([
        'calculate_price',
        'cancel_task',
        'create_task',
        'get_balance',
        'get_model',
        'get_price_list',
        'get_task',
        'list_models',
        'list_tasks',
        'upload_file',
        'wait_for_task',
      ]);
      const reader = await connect(s.url, (await s.services.accounts.createKey(a.id, { scopes: ['tasks:read'] })).apiKey);
      expect((await reader.listTools()).tools.map((t) => t.name).sort()).toEqual([...publicTools, 'get_task', 'list_tasks', 'wait_for_task'].sort());
      await reader.close();
      const create = tools.find((t) => t.name === 'create_task')!;
      expect(create.inputSchema.required).toEqual(['model', 'input']);
      expect(Object.keys(create.inputSchema.properties!).sort()).toEqual(['callBackUrl', 'idempotencyKey', 'input', 'model']);
      expect((create.inputSchema as any).oneOf).toBeUndefined();
      // The whole list stays small: no model's input schema is in it (get_model has them).
      expect(JSON.stringify(tools).length).toBeLessThan(16_000);
      expect(JSON.stringify(create).length).toBeLessThan(2_500);
      const v25 = await call(anon, 'get_model', { model: 'seedance-2.5' });
      expect(v25.data.parameters.properties.resolution.enum).toEqual(['480p', '720p', '1080p']);
      expect(tools.find((t) => t.name === 'get_task')!.annotations?.readOnlyHint).toBe(true);
      await full.close();
    });

    it("tool arguments shared with REST have the schemas of the OpenAPI document: callBackUrl, Idempotency-Key, recordInfo's taskId, the calculator's parameters", async () => {
      const keyed = await connect(s.url, (await s.account(1)).key);
      const { tools } = await keyed.listTools();
      await keyed.close();
      const doc = (await s.call('GET', '/openapi.json')).body;
      const props = (name: string) => (tools.find((t) => t.name === name)!.inputSchema as any).properties;
      const param = (path: string, method: string, name: string) => {
        const { schema, description } = doc.paths[path][method].parameters.find((p: { name: string }) => p.name === name);
        return { ...schema, description };
      };
      expect(props('create_task').callBackUrl).toEqual(doc.components.schemas['CreateTask.suno-v6'].properties.callBackUrl);
      // A link, or "" for no callback (DECISIONS §18).
      expect(props('create_task').callBackUrl.anyOf).toEqual([
        expect.objectContaining({ format: 'uri', maxLength: 2048, pattern: expect.any(String) }),
        { type: 'string', const: '' },
      ]);
      expect(props('create_task').idempotencyKey).toEqual(param('/api/v1/jobs/createTask', 'post', 'Idempotency-Key'));
      for (const tool of ['get_task', 'wait_for_task']) expect(props(tool).taskId).toEqual(param('/api/v1/jobs/recordInfo', 'get', 'taskId'));
      const calculator = doc.paths['/v1/pricing/calculate'].get.parameters.map((p: { name: string }) => p.name).filter((n: string) => n !== 'model');
      expect(calculator.length).toBe(6);
      for (const name of calculator) expect(props('calculate_price')[name], name).toEqual(param('/v1/pricing/calculate', 'get', name));
    });

    it('public tools answer what the REST endpoints answer, without a key', async () => {
      const models = await call(anon, 'list_models');
      expect(models.data.models).toHaveLength(s.services.catalog.models.length);
      const rest = (await s.call('GET', '/api/v1/models')).body.data;
      expect((await call(anon, 'get_model', { model: 'vendor/nano-banana' })).data).toEqual(rest.find((m: any) => m.id === 'google/nano-banana'));
      const q = 'model=seedance-2.5&resolution=480p&duration=auto&reference_video_seconds=2.5';
      const price = await call(anon, 'calculate_price', { model: 'seedance-2.5', resolution: '480p', duration: 'auto', reference_video_seconds: 2.5 });
      expect(price.data).toEqual((await s.call('GET', `/v1/pricing/calculate?${q}`)).body);
      expect((await call(anon, 'get_price_list')).data).toEqual((await s.call('GET', '/v1/pricing')).body);
    });

    it('refusals are tool errors with the REST msg', async () => {
      const bad = await call(anon, 'calculate_price', { model: 'seedance-2.0-fast', duration: '20' });
      expect(bad.error).toBe(true);
      expect(bad.text).toBe((await s.call('GET', '/v1/pricing/calculate?model=seedance-2.0-fast&duration=20')).body.error.message);
      const unknown = await call(anon, 'get_model', { model: 'nope' });
      expect(unknown.error).toBe(true);
      const { key } = await s.account(1);
      const rest = await s.call('POST', '/api/v1/jobs/createTask', { key, body: { model: 'nope', input: {} } });
      expect(unknown.text).toBe(rest.body.msg);
      expect(unknown.data).toMatchObject({ code: 400, error: 'unsupported_model', data: null });
    });

    it('/mcp serves the public tools without a credential and answers 401 to a bad one; /mcp/agent answers 401 without one; a key lacking the scope gets 403 like REST', async () => {
      const init = { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} };
      const post = (headers: Record<string, string>, path = '/mcp') =>
        fetch(`${s.url}${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json', ...headers },
          body: JSON.stringify(init),
        });
      const open = await post({});
      expect(open.status).toBe(200);
      expect(((await open.json()).result.tools as Array<{ name: string }>).map((t) => t.name).sort()).toEqual([
        'calculate_price',
        'get_model',
        'get_price_list',
        'list_models',
      ]);
      const none = await post({}, '/mcp/agent');
      expect(none.status).toBe(401);
      expect(none.headers.get('www-authenticate')).toBe(
        `Bearer resource_metadata="${s.config.PRICING_BASE_URL}/.well-known/oauth-protected-resource/mcp/agent"`,
      );
      expect((await none.json()).error.message).toMatch(/^missing API key: .*\/mcp for the tools that need no key$/);
      const bogus = await post({ authorization: 'Bearer gg_not_a_real_key' });
      expect(bogus.status).toBe(401);
      expect(bogus.headers.get('www-authenticate')).toMatch(/error="invalid_token"/);
      expect((await bogus.json()).error.message).toMatch(/^invalid API key\. /);
      // At /mcp/public a keyed tool is refused, naming where to connect.
      const noKey = await call(anon, 'get_balance');
      expect(noKey).toMatchObject({ error: true, data: { code: 401, error: 'authentication_error' } });
      expect(noKey.text).toBe(
        `get_balance needs an API key or an OAuth access token: connect to ${s.config.PRICING_BASE_URL}/mcp with Authorization: Bearer <credential>`,
      );
      const a = await s.account(1);
      const narrow = (await s.services.accounts.createKey(a.id, { scopes: ['tasks:read'] })).apiKey;
      const client = await connect(s.url, narrow);
      const denied = await call(client, 'get_balance');
      expect(denied.data).toMatchObject({ code: 403, error: 'permission_error' });
      expect(denied.text).toBe((await s.call('GET', '/api/v1/user/balance', { key: narrow })).body.msg);
      await client.close();
    });

    it('create_task charges once per idempotency key (shared with REST), get_task and list_tasks match REST', async () => {
      const { key } = await s.account(1);
      const client = await connect(s.url, key);
      const args = { model: 'suno-v6', input: { prompt: 'a song' }, idempotencyKey: 'mcp-key-1' };
      const first = await call(client, 'create_task', args);
      expect(first.error).toBe(false);
      expect(first.data).toMatchObject({ status: 'submitted', replayed: false });
      const again = await call(client, 'create_task', args);
      expect(again.data).toMatchObject({ taskId: first.data.taskId, replayed: true });
      const rest = await s.call('POST', '/api/v1/jobs/createTask', {
        key,
        headers: { 'idempotency-key': 'mcp-key-1' },
        body: { model: 'suno-v6', input: { prompt: 'a song' } },
      });
      expect(rest.body.data.taskId).toBe(first.data.taskId);
      const balance = await call(client, 'get_balance');
      expect(balance.data).toEqual({ balance: '0.9100', currency: 'USD', balanceRub: 81.9 });
      expect(balance.data).toEqual((await s.call('GET', '/api/v1/user/balance', { key })).body.data);
      const info = (await s.call('GET', `/api/v1/jobs/recordInfo?taskId=${first.data.taskId}`, { key })).body.data;
      expect((await call(client, 'get_task', { taskId: first.data.taskId })).data).toEqual(info);
      expect((await call(client, 'list_tasks', { limit: 5 })).data).toEqual((await s.call('GET', '/api/v1/jobs/list?limit=5', { key })).body.data);
      const badList = await call(client, 'list_tasks', { limit: '500' });
      expect(badList.text).toBe((await s.call('GET', '/api/v1/jobs/list?limit=500', { key })).body.msg);
      const badInput = await call(client, 'create_task', { model: 'seedance-2.0-fast', input: { prompt: 'x', duration: '20' } });
      const restBad = await s.call('POST', '/api/v1/jobs/createTask', { key, body: { model: 'seedance-2.0-fast', input: { prompt: 'x', duration: '20' } } });
      expect(badInput).toMatchObject({ error: true, text: restBad.body.msg });
      const badKey = await call(client, 'create_task', { ...args, idempotencyKey: 'has space' });
      const restBadKey = await s.call('POST', '/api/v1/jobs/createTask', {
        key,
        headers: { 'idempotency-key': 'has space' },
        body: { model: 'suno-v6', input: { prompt: 'a song' } },
      });
      expect(badKey).toMatchObject({ error: true, text: restBadKey.body.msg, data: { code: 400 } });
      expect((await call(client, 'create_task', { ...args, idempotencyKey: 7 })).text).toBe('idempotencyKey must be a string (got 7)');
      expect((await call(client, 'get_task', { taskId: 7 })).text).toBe('taskId must be a string (got 7)');
      expect((await call(client, 'get_task', {})).text).toBe('taskId is required; pass the taskId create_task returned');
      const missing = await call(client, 'get_task', { taskId: 'tk_nope' });
      expect(missing.text).toBe((await s.call('GET', '/api/v1/jobs/recordInfo?taskId=tk_nope', { key })).body.msg);
      const poor = await s.account(0);
      const broke = await connect(s.url, poor.key);
      const charged = await call(broke, 'create_task', { model: 'suno-v6', input: { prompt: 'x' } });
      expect(charged.data).toMatchObject({ code: 402, error: 'payment_required', data: { balance: '0.0000', required: '0.0900', currency: 'USD' } });
      await broke.close();
      await client.close();
    });

    it('wait_for_task returns when the task is final, with rising progress notifications; a short wait returns done false', async () => {
      const { key } = await s.account(1);
      const client = await connect(s.url, key);
      const { data } = await call(client, 'create_task', { model: 'seedream-flash', input: { prompt: 'a cat' } });
      const short = await call(client, 'wait_for_task', { taskId: data.taskId, timeoutSeconds: 1 });
      expect(short.data).toMatchObject({ done: false, task: { state: 'waiting' } });
      s.services.engine.start();
      const seen: number[] = [];
      const waited = await call(client, 'wait_for_task', { taskId: data.taskId, timeoutSeconds: 60 }, (p) => seen.push(p.progress));
      expect(waited.data).toMatchObject({ done: true, task: { taskId: data.taskId, state: 'success', progress: 100 } });
      expect(seen.length).toBeGreaterThan(0);
      expect(seen).toEqual([...seen].sort((a, b) => a - b));
      expect(new Set(seen).size).toBe(seen.length);
      const bad = await call(client, 'wait_for_task', { taskId: data.taskId, timeoutSeconds: 1000 });
      expect(bad).toMatchObject({ error: true, text: 'timeoutSeconds must be a whole number from 1 to 120 (got 1000)' });
      await client.close();
    });

    it('is stateless: GET and DELETE answer 405, and another process on the same database serves the same task', async () => {
      const r = await fetch(`${s.url}/mcp`);
      expect(r.status).toBe(405);
      expect((await fetch(`${s.url}/mcp`, { method: 'DELETE' })).status).toBe(405);
      // Two connections to one SQLite file deadlock inside one process, so the second process runs on PostgreSQL only.
      if (dialect !== 'postgres') return;
      const other = await buildServices(s.config);
      const app = buildApp(other);
      await app.listen({ port: 0, host: '127.0.0.1' });
      const port = (app.server.address() as { port: number }).port;
      try {
        const { key } = await s.account(1);
        const created = await call(await connect(s.url, key), 'create_task', { model: 'seedream-flash', input: { prompt: 'across' } });
        const there = await connect(`http://127.0.0.1:${port}`, key);
        const waited = await call(there, 'wait_for_task', { taskId: created.data.taskId, timeoutSeconds: 60 });
        expect(waited.data).toMatchObject({ done: true, task: { state: 'success' } });
        await there.close();
      } finally {
        await app.close();
        await other.close();
      }
    });
  });
}

describe('MCP keyed tools share the REST per-key rate limit', () => {
  it('refuses the call over the budget with the REST msg', async () => {
    const s = await startServer('sqlite', { ...FAST, RATE_LIMIT_READ: '2', RATE_LIMIT_WINDOW_SECONDS: '30' });
    try {
      const { key } = await s.account(1);
      expect((await s.call('GET', '/api/v1/user/balance', { key })).status).toBe(200);
      const client = await connect(s.url, key);
      expect((await call(client, 'get_balance')).error).toBe(false);
      const refused = await call(client, 'get_balance');
      expect(refused.error).toBe(true);
      expect(refused.text).toMatch(/^rate limit exceeded: at most 2 recordInfo, list and balance requests per API key every 30 s; retry in \d+ s$/);
      await client.close();
    } finally {
      await s.close();
    }
  });
});
