import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gengate } from '../helpers/cli.js';
import { dialects } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { FAST, eventually } from '../tasks/support.js';

const ADMIN = 'admin-token-0123456789';

describe.each(dialects())('model switches on %s', (dialect) => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer(dialect, { ...FAST, ADMIN_TOKEN: ADMIN, MODEL_SWITCH_CACHE_MS: '50' });
  });
  afterAll(() => s.close());

  const admin = (method: string, path: string) => s.call(method, `/admin/v1${path}`, { headers: { authorization: `Bearer ${ADMIN}` } });
  const createTask = (key: string) => s.call('POST', '/api/v1/jobs/createTask', { key, body: { model: 'nano-banana-2', input: { prompt: 'a cat' } } });
  const listed = async () => (await s.call('GET', '/api/v1/models')).body.data.find((m: { id: string }) => m.id === 'nano-banana-2').enabled;

  it('a model disabled by the CLI (another process) answers 505 model_disabled, charges nothing, and shows in /models', async () => {
    const a = await s.account(1);
    const env = { DATABASE_URL: s.config.DATABASE_URL, DATA_DIR: s.config.DATA_DIR };
    const off = await gengate(['model', 'disable', 'nano-banana-2', '--json'], env);
    expect(off.code, off.stderr).toBe(0);
    expect(JSON.parse(off.stdout).model).toMatchObject({ id: 'nano-banana-2', enabled: false, catalogEnabled: true });
    // Wait for this process to see the switch (MODEL_SWITCH_CACHE_MS) without creating, and paying for, tasks meanwhile.
    await eventually(async () => (await listed()) === false, 5_000, 'this process to see the switch');
    const res = await createTask(a.key);
    expect(res.status).toBe(505);
    expect(res.body).toMatchObject({ error: 'model_disabled' });
    expect(res.body.msg).toMatch(/nano-banana-2 is temporarily disabled/);
    expect(await listed()).toBe(false);
    expect((await s.call('GET', '/api/v1/user/balance', { key: a.key })).body.data.balance).toBe('1.0000');
    const shown = await gengate(['model', 'list', '--json'], env);
    expect(JSON.parse(shown.stdout).models.find((m: { id: string }) => m.id === 'nano-banana-2').enabled).toBe(false);

    const on = await admin('POST', '/models/nano-banana-2/enable');
    expect(on.status).toBe(200);
    expect(on.body.data).toMatchObject({ id: 'nano-banana-2', enabled: true });
    expect((await createTask(a.key)).status).toBe(200);
    expect(await listed()).toBe(true);
  }, 240_000); // several runs of the real CLI or server, each a new process loading the sources: slow on a busy machine

  it('/v1/pricing shows a switch made after start, here at once and from another process, with an ETag that follows it', async () => {
    const priced = async () => {
      const r = await s.call('GET', '/v1/pricing');
      return { etag: r.headers.get('etag')!, enabled: r.body.models.find((m: { id: string }) => m.id === 'seedream-flash').enabled as boolean };
    };
    const before = await priced();
    expect(before.enabled).toBe(true);
    expect((await admin('POST', '/models/seedream-flash/disable')).status).toBe(200);
    const off = await priced();
    expect(off.enabled).toBe(false);
    expect(off.etag).not.toBe(before.etag);
    const revalidated = await fetch(`${s.url}/v1/pricing`, { headers: { 'if-none-match': before.etag } });
    expect(revalidated.status).toBe(200);
    const env = { DATABASE_URL: s.config.DATABASE_URL, DATA_DIR: s.config.DATA_DIR };
    const on = await gengate(['model', 'enable', 'seedream-flash', '--json'], env);
    expect(on.code, on.stderr).toBe(0);
    await eventually(async () => (await priced()).enabled, 10_000, 'the price list to show the switch made by another process');
    // The ETag hashes the body: the same switches give the same ETag in every process.
    expect((await priced()).etag).toBe(before.etag);
  }, 240_000);

  it('admin API lists models, switches aliases and slashed ids, refuses unknown ones and needs the token', async () => {
    const all = await admin('GET', '/models');
    expect(all.status).toBe(200);
    expect(all.body.data.length).toBeGreaterThan(5);
    const off = await admin('POST', `/models/${encodeURIComponent('google/nano-banana')}/disable`);
    expect(off.body.data).toMatchObject({ id: 'google/nano-banana', enabled: false });
    await admin('POST', `/models/${encodeURIComponent('google/nano-banana')}/enable`);
    expect((await admin('POST', '/models/no-such-model/disable')).status).toBe(404);
    expect((await s.call('POST', '/admin/v1/models/nano-banana-2/disable')).status).toBe(401);
  });
});
