import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDb, dialects, type TestDb } from '../helpers/db.js';
import { gengate, spawnServe, stop } from '../helpers/cli.js';

/** 0.060 USD. */
const IMAGE = { model: 'nano-banana-2', input: { prompt: 'a red fox', resolution: '2K' } };

describe.each(dialects())('a key budget across two server processes on %s', (dialect) => {
  let db: TestDb;
  let env: Record<string, string>;
  let servers: Array<Awaited<ReturnType<typeof spawnServe>>> = [];
  beforeAll(async () => {
    db = await createTestDb(dialect);
    env = {
      DATABASE_URL: db.url,
      DATA_DIR: db.dir,
      GENGATE_SECRET_KEY: 'budget-test-secret-key-0123456789abcdef',
      FIRST_RUN_ACCOUNT: 'false',
      RUN_ENGINE: 'false',
      AUTH_CACHE_MS: '0',
    };
    servers = [await spawnServe(env)];
    servers.push(await spawnServe(env));
  }, 240_000);
  afterAll(async () => {
    await Promise.all(servers.map((s) => stop(s.child)));
    await db.drop();
  });

  it('lets exactly as many creates through as the budget covers, whichever process takes them', async () => {
    const account = JSON.parse((await gengate(['account', 'create', '--name', 'two', '--balance', '100', '--json'], env)).stdout).account;
    const made = await gengate(['key', 'create', '--account', account.id, '--name', 'shared', '--budget', '0.6', '--budget-period', 'day', '--json'], env);
    expect(made.code, made.stderr).toBe(0);
    const { key, apiKey } = JSON.parse(made.stdout);
    const post = (i: number) =>
      fetch(`${servers[i % 2]!.url}/api/v1/jobs/createTask`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify(IMAGE),
      }).then(async (r) => ({ status: r.status, body: (await r.json()) as { data: { balance?: string } } }));
    const results = await Promise.all(Array.from({ length: 40 }, (_, i) => post(i)));
    expect(results.filter((r) => r.status === 200)).toHaveLength(10);
    const refused = results.filter((r) => r.status === 402);
    expect(refused).toHaveLength(30);
    expect(new Set(refused.map((r) => r.body.data.balance))).toEqual(new Set(['0.0000']));
    const listed = JSON.parse((await gengate(['key', 'list', '--account', account.id, '--json'], env)).stdout).keys;
    expect(listed.find((k: { id: string }) => k.id === key.id)).toMatchObject({ spent: '0.6000', remaining: '0.0000' });
    const shown = JSON.parse((await gengate(['account', 'show', account.id, '--json'], env)).stdout).account;
    expect(shown.balance).toBe('99.4000');
  }, 240_000); // several runs of the real CLI or server, each a new process loading the sources: slow on a busy machine
});

/**
 * Issue 39 finding 8: the budget is read from the database inside the create transaction, so a
 * budget lowered by another process holds at once, whatever the keys each server remembers
 * (AUTH_CACHE_MS a minute here); and a key made before its maker got a budget is bounded by it.
 */
describe.each(dialects())('budgets read from the database, makers included, across processes on %s', (dialect) => {
  let db: TestDb;
  let env: Record<string, string>;
  let servers: Array<Awaited<ReturnType<typeof spawnServe>>> = [];
  beforeAll(async () => {
    db = await createTestDb(dialect);
    env = {
      DATABASE_URL: db.url,
      DATA_DIR: db.dir,
      GENGATE_SECRET_KEY: 'budget-test-secret-key-0123456789abcdef',
      FIRST_RUN_ACCOUNT: 'false',
      RUN_ENGINE: 'false',
      AUTH_CACHE_MS: '60000',
    };
    servers = [await spawnServe(env)];
    servers.push(await spawnServe(env));
  }, 240_000);
  afterAll(async () => {
    await Promise.all(servers.map((s) => stop(s.child)));
    await db.drop();
  });

  const call = (i: number, apiKey: string, path: string, body: unknown) =>
    fetch(`${servers[i]!.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));
  const create = (i: number, apiKey: string) => call(i, apiKey, '/api/v1/jobs/createTask', IMAGE);
  const cli = async (args: string[]) => {
    const r = await gengate(args, env);
    expect(r.code, r.stderr).toBe(0);
    return JSON.parse(r.stdout);
  };

  it('a budget lowered from another process holds from the next create on', async () => {
    const account = (await cli(['account', 'create', '--name', 'lower', '--balance', '100', '--json'])).account;
    const { key, apiKey } = await cli(['key', 'create', '--account', account.id, '--budget', '0.6', '--json']);
    // Both servers remember the key (and its budget of 0.6) for a minute from here.
    expect((await create(0, apiKey)).status).toBe(200);
    expect((await create(1, apiKey)).status).toBe(200);
    await cli(['key', 'update', key.id, '--budget', '0.18', '--json']);
    expect((await create(1, apiKey)).status).toBe(200);
    const refused = await create(0, apiKey);
    expect(refused.status).toBe(402);
    expect(refused.body.msg).toContain('budget of 0.1800 USD');
    expect((await create(1, apiKey)).status).toBe(402);
  }, 240_000);

  it('a key made before its maker got a budget is bounded by that budget, with the maker', async () => {
    const account = (await cli(['account', 'create', '--name', 'lineage', '--balance', '100', '--json'])).account;
    const parent = await cli(['key', 'create', '--account', account.id, '--name', 'parent', '--json']);
    const child = await call(0, parent.apiKey, '/api/v1/keys', { name: 'child' });
    expect(child.status).toBe(200);
    await cli(['key', 'update', parent.key.id, '--budget', '0.12', '--json']);
    expect((await create(1, child.body.data.apiKey)).status).toBe(200);
    expect((await create(0, parent.apiKey)).status).toBe(200);
    const refused = await create(0, child.body.data.apiKey);
    expect(refused.status).toBe(402);
    expect(refused.body.msg).toContain(`the budget of the API key ${parent.key.id} that made this key`);
    expect((await create(1, parent.apiKey)).status).toBe(402);
    const shown = (await cli(['account', 'show', account.id, '--json'])).account;
    expect(shown.balance).toBe('99.8800');
  }, 240_000);
});
