import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Backend } from '../../src/backends/index.js';
import { dialects } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { UNLIMITED, create, info } from '../tasks/support.js';

const scratch = mkdtempSync(path.join(tmpdir(), 'gengate-poll-errors-'));

/** An upstream that sends notices and whose status reads fail while `down`. */
function flaky() {
  const state = { down: false, polls: 0 };
  const backend: Backend = {
    name: 'flaky',
    notices: true,
    async submit() {
      return 'job-1';
    },
    async progress() {
      state.polls++;
      if (state.down) throw new Error('connection reset by the upstream');
      return { state: 'running', progress: 10 };
    },
    async results() {
      throw new Error('never done here');
    },
    async cancel() {
      return 'not-cancellable' as const;
    },
  };
  return { backend, state };
}

/**
 * Issue 36 item 2: a transient error while polling an upstream that sends notices (so its usual
 * next poll is UPSTREAM_FALLBACK_POLL_MS away) is retried on the engine's own backoff,
 * ENGINE_RETRY_MS·2ⁿ, not after the fallback interval; and the errors of one such burst count once
 * towards the route's circuit breaker. Driven by `tick` on a clock the test sets.
 */
describe.each(dialects())('poll errors on an upstream route on %s', (dialect) => {
  let s: TestServer;
  let now = 1_800_000_000_000;
  const up = flaky();
  beforeAll(async () => {
    const catalog = path.join(scratch, `catalog-${dialect}.json`);
    const route = { backend: 'same-api', name: 'flaky', base_url: 'https://upstream.example.com', key_env: 'UP_KEY' };
    writeFileSync(catalog, JSON.stringify({ models: { 'nano-banana-2': { routes: [route] } } }));
    s = await startServer(
      dialect,
      {
        ...UNLIMITED,
        GENGATE_CATALOG: catalog,
        UP_KEY: 'k',
        UPSTREAM_WEBHOOKS: 'true',
        PUBLIC_BASE_URL: 'https://gengate.example.com',
        UPSTREAM_POLL_MS: '4000',
        UPSTREAM_FALLBACK_POLL_MS: '60000',
        ENGINE_RETRY_MS: '1000',
        ENGINE_MAX_ATTEMPTS: '3',
        ROUTE_BREAKER_FAILURES: '3',
      },
      undefined,
      { clock: { now: () => now }, backends: { flaky: up.backend } },
    );
  });
  afterAll(() => s?.close());

  const runAtIn = async (id: string) =>
    Number((await s.services.database.db.selectFrom('tasks').select('run_at').where('id', '=', id).executeTakeFirstOrThrow()).run_at) - now;
  const breaker = () => s.services.routeHealth.details(s.services.catalog).find((r) => r.route === 'flaky')!;

  it('retries after ENGINE_RETRY_MS·2ⁿ, not the 60 s fallback interval, and a burst of errors counts once towards the breaker', async () => {
    const a = await s.account(1);
    const id = await create(s, a.key, 'nano-banana-2', { prompt: 'a kite' });
    expect(await s.services.engine.tick()).toBe(1); // hand-off
    expect(await runAtIn(id)).toBe(4000); // first poll at UPSTREAM_POLL_MS
    now += 4000;
    expect(await s.services.engine.tick()).toBe(1); // generating: from now on the safety-net interval
    expect((await info(s, a.key, id)).state).toBe('generating');
    expect(await runAtIn(id)).toBe(60_000);

    // A notice makes it due; the polls that follow fail (the upstream drops connections for a while).
    up.state.down = true;
    const { upstream_token: token } = await s.services.database.db.selectFrom('tasks').select('upstream_token').where('id', '=', id).executeTakeFirstOrThrow();
    expect((await fetch(`${s.url}/upstream/v1/notify/${token}`, { method: 'POST', body: '{}' })).status).toBe(200);
    const waits: number[] = [];
    for (let i = 0; i < 3; i++) {
      expect(await s.services.engine.tick()).toBe(1);
      waits.push(await runAtIn(id));
      now += waits.at(-1)!;
    }
    expect(waits).toEqual([1000, 2000, 4000]);
    // Three failed polls of one task in a row are one burst: one failure towards the breaker, which stays closed.
    expect(breaker()).toMatchObject({ failuresInRow: 1, state: 'closed' });

    up.state.down = false;
    expect(await s.services.engine.tick()).toBe(1);
    expect(await runAtIn(id)).toBe(60_000);
    expect(breaker()).toMatchObject({ failuresInRow: 0, state: 'closed' });
  });
});
