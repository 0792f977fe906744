import { mkdtempSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BackendFailure, type Backend, type BackendJob } from '../../src/backends/index.js';
import { renderImage } from '../../src/backends/local/render.js';
import { NotAccepted } from '../../src/backends/upstream/index.js';
import { ConfigError, loadConfig } from '../../src/config.js';
import { buildServices } from '../../src/services.js';
import { createTestDb, dialects } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { gengate } from '../helpers/cli.js';
import { startFakeUpstream } from '../tasks/fake-upstream.js';
import { FAST, MovableClock, create, eventually, expectLedgerInvariant, fetchFile, info, resultUrls, settle, taskEntries } from '../tasks/support.js';

const scratch = mkdtempSync(path.join(tmpdir(), 'gengate-routes-'));
const png = path.join(scratch, 'result.png');

function catalogFile(name: string, models: Record<string, unknown>): string {
  const file = path.join(scratch, `${name}.json`);
  writeFileSync(file, JSON.stringify({ models }));
  return file;
}

/** An upstream without idempotency, scripted by the prompt (an external provider's behaviours). */
function scripted() {
  const said = (job: BackendJob) => String(job.input.prompt ?? '');
  const seen = { submits: 0, cancels: [] as string[] };
  const backend: Backend = {
    name: 'scripted',
    async submit(job) {
      seen.submits++;
      if (said(job).includes('hangs')) return new Promise<string>(() => {});
      if (said(job).includes('busy') && seen.submits <= 2) throw new NotAccepted('HTTP 503', 0);
      if (said(job).includes('refused')) throw new BackendFailure('rejected', 'the upstream refused the duration');
      return `job-${seen.submits}`;
    },
    async progress() {
      return { state: 'running', progress: 10 };
    },
    async results() {
      throw new Error('never done');
    },
    async cancel(_job, ref) {
      seen.cancels.push(ref);
      return 'cancelled' as const;
    },
  };
  return { backend, seen };
}

beforeAll(async () => {
  await renderImage({ format: 'png', prompt: 'upstream' }, png);
});

describe.each(dialects())('routes, retries and fail-over on %s', (dialect) => {
  let s: TestServer;
  let fake: Awaited<ReturnType<typeof startFakeUpstream>>;
  const clock = new MovableClock();
  const script = scripted();
  beforeAll(async () => {
    fake = await startFakeUpstream(png);
    const file = catalogFile(`routes-${dialect}`, {
      'nano-banana-2': { routes: [{ backend: 'same-api', base_url: fake.url, key_env: 'UP_KEY' }, { backend: 'local' }] },
      'nano-banana-pro': { routes: [{ backend: 'same-api', name: 'scripted', base_url: fake.url, key_env: 'UP_KEY' }, { backend: 'local' }] },
      'google/nano-banana': { routes: [{ backend: 'same-api', name: 'limited', base_url: fake.url, key_env: 'UP_KEY', concurrency: 1 }] },
    });
    s = await startServer(
      dialect,
      {
        ...FAST,
        GENGATE_CATALOG: file,
        UP_KEY: 'up-secret',
        ALLOW_PRIVATE_NETWORK: 'true',
        ENGINE_MAX_ATTEMPTS: '2',
        ROUTE_BREAKER_FAILURES: '3',
        ROUTE_BREAKER_COOLDOWN_MS: '60000',
        UPSTREAM_POLL_MS: '20',
        // Cuts the scripted submit that hangs; long enough that the fake upstream's answers, slow on a
        // busy machine, are not cut too (a cut submit is 'unclear' and never repeated).
        BACKEND_CALL_TIMEOUT_MS: '5000',
      },
      undefined,
      { clock, backends: { scripted: script.backend } },
    );
    s.services.engine.start();
  });
  afterAll(async () => {
    await s.close();
    await fake.close();
  });
  const keyed = (id: string) => fake.creates.filter((c) => c.key === `gengate-${id}`);
  const row = (id: string) => s.services.database.db.selectFrom('tasks').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const routesOnModels = async () => (await s.call('GET', '/api/v1/models')).body.data.find((m: any) => m.id === 'nano-banana-2').routes;

  it('route 1 answering 503 is retried ENGINE_MAX_ATTEMPTS times, then the task completes on route 2', async () => {
    const a = await s.account(1);
    const id = await create(s, a.key, 'nano-banana-2', { prompt: 'a cat' });
    const t = await settle(s, a.key, id);
    expect(t.state).toBe('success');
    expect(keyed(id)).toHaveLength(2);
    expect(keyed(id)[0]!.auth).toBe('Bearer up-secret');
    expect(await row(id)).toMatchObject({ backend: 'local', route_index: 1 });
    expect(Object.keys(await taskEntries(s, id))).toEqual(['charge']);
    expect(await routesOnModels()).toEqual([
      { backend: 'same-api', state: 'closed' },
      { backend: 'local', state: 'closed' },
    ]);
  });

  it('the breaker opens after ROUTE_BREAKER_FAILURES failures in a row; open routes are skipped and shown in /models and /metrics', async () => {
    const a = await s.account(1);
    const id = await create(s, a.key, 'nano-banana-2', { prompt: 'a dog' });
    expect((await settle(s, a.key, id)).state).toBe('success');
    expect(keyed(id)).toHaveLength(1); // the third failure in a row opened it: the retry skipped the route
    const next = await create(s, a.key, 'nano-banana-2', { prompt: 'a bird' });
    expect((await settle(s, a.key, next)).state).toBe('success');
    expect(keyed(next)).toHaveLength(0);
    expect(await routesOnModels()).toEqual([
      { backend: 'same-api', state: 'open' },
      { backend: 'local', state: 'closed' },
    ]);
    const metrics = await (await fetch(`${s.url}/metrics`)).text();
    expect(metrics).toContain('gengate_route_breaker_state{route="same-api:nano-banana-2#1",model="nano-banana-2",backend="same-api"} 2');
    expect(metrics).toContain('gengate_route_failures_in_row{route="same-api:nano-banana-2#1",model="nano-banana-2",backend="same-api"} 3');
    expect(metrics).toContain('gengate_route_submits_total{route="same-api:nano-banana-2#1",outcome="not_accepted"} 3');
    expect(metrics).toContain('gengate_route_submits_total{route="local",outcome="accepted"} 3');
  });

  it('after the cool-down one trial goes to the route; its success closes the breaker; the result is re-hosted', async () => {
    fake.state.mode = 'ok';
    clock.advance(61_000);
    expect((await routesOnModels())[0]).toEqual({ backend: 'same-api', state: 'half-open' });
    const a = await s.account(1);
    const id = await create(s, a.key, 'nano-banana-2', { prompt: 'a fox' });
    const t = await settle(s, a.key, id);
    expect(t.state).toBe('success');
    expect(keyed(id)).toHaveLength(1);
    expect(keyed(id)[0]!.body).toMatchObject({ model: 'nano-banana-2', input: { prompt: 'a fox' } });
    expect(await row(id)).toMatchObject({ backend: 'same-api:nano-banana-2#1', route_index: 0 });
    const [link] = resultUrls(t);
    expect(link!.startsWith(s.config.PUBLIC_BASE_URL)).toBe(true);
    const res = await fetchFile(s, link!);
    expect(Buffer.from(await res.arrayBuffer()).equals(await readFile(png))).toBe(true);
    expect(await routesOnModels()).toEqual([
      { backend: 'same-api', state: 'closed' },
      { backend: 'local', state: 'closed' },
    ]);
    expect(Object.keys(await taskEntries(s, id))).toEqual(['charge']);
  });

  it('an upstream task that fails maps its failCode back and refunds', async () => {
    fake.state.taskState = 'fail';
    const a = await s.account(1);
    const id = await create(s, a.key, 'nano-banana-2', { prompt: 'a wolf' });
    const t = await settle(s, a.key, id);
    expect(t).toMatchObject({ state: 'fail', failCode: 501, refunded: true, error: { type: 'server_error' } });
    expect(t.failMsg).toContain('the model gave up');
    expect((await s.call('GET', '/api/v1/user/balance', { key: a.key })).body.data.balance).toBe('1.0000');
    fake.state.taskState = 'success';
  });

  it('a route at its concurrency limit makes the next task wait until a slot is free', async () => {
    fake.state.taskState = 'generating';
    const a = await s.account(1);
    const first = await create(s, a.key, 'google/nano-banana', { prompt: 'first' });
    await eventually(async () => (await info(s, a.key, first)).state === 'generating');
    const second = await create(s, a.key, 'google/nano-banana', { prompt: 'second' });
    // The engine takes the second up in several rounds and puts it back each time (its run_at moves on);
    // it stays waiting, never submitted.
    const runAts = new Set<number>();
    await eventually(async () => runAts.add(Number((await row(second)).run_at)).size >= 3, 15_000, 'the engine to put the second task back twice');
    expect((await info(s, a.key, second)).state).toBe('waiting');
    expect(keyed(second)).toHaveLength(0);
    const metrics = await (await fetch(`${s.url}/metrics`)).text();
    expect(metrics).toContain('gengate_route_in_flight{route="limited"} 1');
    fake.state.taskState = 'success';
    expect((await settle(s, a.key, first)).state).toBe('success');
    expect((await settle(s, a.key, second)).state).toBe('success');
    expect(keyed(second)).toHaveLength(1);
  });

  it('NotAccepted from an upstream without idempotency is retried, then the next route takes the task', async () => {
    const a = await s.account(1);
    const before = script.seen.submits;
    const id = await create(s, a.key, 'nano-banana-pro', { prompt: 'busy upstream' });
    expect((await settle(s, a.key, id)).state).toBe('success');
    expect(script.seen.submits - before).toBe(2);
    expect(await row(id)).toMatchObject({ backend: 'local', route_index: 1 });
  });

  it('a refusal at submit fails the task at once without trying the next route', async () => {
    const a = await s.account(1);
    const id = await create(s, a.key, 'nano-banana-pro', { prompt: 'refused please' });
    const t = await settle(s, a.key, id);
    expect(t).toMatchObject({ state: 'fail', failCode: 422, refunded: true });
    expect(await row(id)).toMatchObject({ backend: 'scripted', route_index: 0 });
  });

  it('a submit that may have been accepted is never repeated: the task fails 503 and is refunded', async () => {
    const a = await s.account(1);
    const before = script.seen.submits;
    const id = await create(s, a.key, 'nano-banana-pro', { prompt: 'hangs forever' });
    const t = await settle(s, a.key, id);
    expect(t).toMatchObject({ state: 'fail', failCode: 503, refunded: true });
    expect(t.failMsg).toContain('it is not repeated because the upstream might have taken it');
    expect(script.seen.submits - before).toBe(1);
    expect(await (await fetch(`${s.url}/metrics`)).text()).toContain('gengate_route_submits_total{route="scripted",outcome="unclear"} 1');
  });

  it('a hand-off interrupted by a crash is not submitted again to an upstream without idempotency', async () => {
    await s.services.engine.stop();
    const a = await s.account(1);
    const id = await create(s, a.key, 'nano-banana-pro', { prompt: 'crash during hand-off' });
    await s.services.database.tx((w) => w.updateTable('tasks').set({ backend: 'scripted', handed_at: clock.now() }).where('id', '=', id).execute());
    const before = script.seen.submits;
    await s.services.engine.tick();
    const t = await info(s, a.key, id);
    expect(t).toMatchObject({ state: 'fail', failCode: 503, refunded: true });
    expect(t.failMsg).toContain('was interrupted');
    expect(script.seen.submits).toBe(before);
    s.services.engine.start();
  });

  it('at the 20-minute timeout an upstream task still running is failed with 504, refunded and cancelled upstream', async () => {
    const a = await s.account(1);
    const id = await create(s, a.key, 'nano-banana-pro', { prompt: 'a slow one' });
    await eventually(async () => (await info(s, a.key, id)).state === 'generating');
    const ref = (await row(id)).backend_ref!;
    clock.advance(21 * 60_000);
    const t = await settle(s, a.key, id);
    expect(t).toMatchObject({ state: 'fail', failCode: 504, refunded: true, error: { type: 'timeout_error' } });
    await eventually(async () => script.seen.cancels.includes(ref));
    await expectLedgerInvariant(s.services.database);
  });
});

describe('route credentials', () => {
  it('a route naming a setting that is not set stops the start with a ConfigError naming it', async () => {
    const db = await createTestDb('sqlite');
    try {
      const file = catalogFile('missing-key', {
        'suno-v6': { routes: [{ backend: 'same-api', base_url: 'https://up.example.com', key_env: 'MISSING_UP_KEY' }] },
      });
      const config = loadConfig({ DATA_DIR: db.dir, DATABASE_URL: db.url, LOG_LEVEL: 'silent', GENGATE_CATALOG: file });
      const err = await buildServices(config).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as Error).message).toBe(
        `GENGATE_CATALOG ${file}: models."suno-v6".routes[0].key_env: the setting MISSING_UP_KEY is not set; put the same-api credential in the environment variable MISSING_UP_KEY (or in the GENGATE_CONFIG file)`,
      );
      // Operator commands (the CLI) build no upstream routes, so they work without the provider's credential.
      const admin = await buildServices(config, { upstreams: false });
      expect((await admin.accounts.create('operator', 0)).account.name).toBe('operator');
      await admin.close();
      const cli = await gengate(['account', 'list', '--json'], { DATA_DIR: db.dir, DATABASE_URL: db.url, GENGATE_CATALOG: file });
      expect(cli.code, cli.stderr).toBe(0);
      expect(JSON.parse(cli.stdout).accounts.map((a: { name: string }) => a.name)).toEqual(['operator']);
      expect(loadConfig({ DATA_DIR: db.dir, MISSING_UP_KEY: 'k', PATH_X: 'no' }).secrets).toEqual({ MISSING_UP_KEY: 'k' });
      const settings = path.join(scratch, 'settings.json');
      writeFileSync(settings, JSON.stringify({ FILE_UP_TOKEN: 'from-file', BOTH_KEY: 'file' }));
      expect(loadConfig({ GENGATE_CONFIG: settings, BOTH_KEY: 'env', HOME_DIR: '/x' }).secrets).toEqual({ FILE_UP_TOKEN: 'from-file', BOTH_KEY: 'env' });
      writeFileSync(settings, JSON.stringify({ FILE_UP_PASSWORD: 'x' }));
      expect(() => loadConfig({ GENGATE_CONFIG: settings })).toThrow(/unknown setting FILE_UP_PASSWORD/);
    } finally {
      await db.drop();
    }
  }, 240_000);
});
