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
  }, 90_000);
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
  }, 120_000); // several runs of the real CLI or server, each a new process loading the sources: slow on a busy machine
});
