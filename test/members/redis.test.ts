import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';
import { needs } from '../helpers/tools.js';

const redisUrl = process.env.TEST_REDIS_URL;

describe.skipIf(!needs('redis'))('sign-in limits shared through Redis', () => {
  let servers: TestServer[];
  beforeAll(async () => {
    const env = { REDIS_URL: redisUrl!, SIGNIN_LIMIT_PER_EMAIL: '4', SIGNIN_LIMIT_PER_ADDRESS: '1000', SIGNIN_WINDOW_SECONDS: '60', RUN_ENGINE: 'false' };
    servers = await Promise.all([startServer('sqlite', env), startServer('sqlite', env)]);
  }, 60_000);
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.close()));
  });

  it('guesses at one email spread over two servers share one budget', async () => {
    // A fresh email each run: the Redis counters outlive the test.
    const email = `guess-${randomBytes(6).toString('hex')}@example.com`;
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) {
      const r = await servers[i % 2]!.call('POST', '/api/v1/auth/signin', { body: { email, password: 'wrong password!' } });
      statuses.push(r.status);
    }
    expect(statuses).toEqual([401, 401, 401, 401, 429, 429]);
  });
});
