import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDb, type TestDb } from '../helpers/db.js';
import { gengate, spawnServe, stop } from '../helpers/cli.js';
import { needs } from '../helpers/tools.js';

const redisUrl = process.env.TEST_REDIS_URL;

describe.skipIf(!needs('redis'))('rate limits shared through Redis', () => {
  let db: TestDb;
  let servers: Array<Awaited<ReturnType<typeof spawnServe>>>;
  let key: string;
  beforeAll(async () => {
    db = await createTestDb('sqlite');
    const env = {
      DATABASE_URL: db.url,
      DATA_DIR: db.dir,
      REDIS_URL: redisUrl!,
      RATE_LIMIT_READ: '10',
      RATE_LIMIT_WINDOW_SECONDS: '30',
      FIRST_RUN_ACCOUNT: 'false',
    };
    key = JSON.parse((await gengate(['--new-database', 'account', 'create', '--name', 'shared', '--balance', '1', '--json'], env)).stdout).apiKey;
    servers = await Promise.all([spawnServe(env), spawnServe(env)]);
  }, 240_000);
  afterAll(async () => {
    await Promise.all(servers.map((s) => stop(s.child)));
    await db.drop();
  });

  it('two server processes share one budget per key', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 14; i++) {
      const server = servers[i % 2]!;
      const r = await fetch(`${server.url}/api/v1/user/balance`, { headers: { authorization: `Bearer ${key}` } });
      statuses.push(r.status);
    }
    expect(statuses.filter((s) => s === 200)).toHaveLength(10);
    expect(statuses.slice(10)).toEqual([429, 429, 429, 429]);
  });
});
