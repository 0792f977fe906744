import type { ChildProcess } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { buildServices } from '../../src/services.js';
import { MICROS_PER_USD } from '../../src/billing/index.js';
import { spawnServe, stop } from '../helpers/cli.js';
import { createTestDb, dialects, type TestDb } from '../helpers/db.js';
import { UNLIMITED, eventually, expectLedgerInvariant } from '../tasks/support.js';

/** Real `gengate serve` processes over one database: kill -9, restarts and two processes at once. */
describe.each(dialects())('processes sharing a %s database', (dialect) => {
  let db: TestDb;
  const children: ChildProcess[] = [];
  afterEach(async () => {
    for (const c of children.splice(0)) await stop(c, 'SIGKILL');
    await db?.drop();
  });

  const env = (extra: Record<string, string> = {}) => ({
    DATA_DIR: db.dir,
    DATABASE_URL: db.url,
    FIRST_RUN_ACCOUNT: 'false',
    ENGINE_POLL_MS: '20',
    ENGINE_LEASE_MS: '1000',
    LOCAL_QUEUE_MS: '100',
    LOCAL_GENERATE_MS: '300',
    ...UNLIMITED,
    ...extra,
  });
  async function serve(extra: Record<string, string> = {}) {
    const p = await spawnServe(env(extra));
    children.push(p.child);
    return p;
  }
  async function setup(usd: number): Promise<string> {
    db = await createTestDb(dialect);
    const services = await buildServices(loadConfig(env()));
    const { apiKey } = await services.accounts.create('crash', usd * MICROS_PER_USD);
    await services.close();
    return apiKey;
  }
  async function call(url: string, key: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
    const res = await fetch(url + path, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}), ...headers },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    return { status: res.status, body: (await res.json()) as any };
  }
  /** Opens the database from the test process to check what the servers left behind. */
  async function inspect<T>(fn: (s: Awaited<ReturnType<typeof buildServices>>) => Promise<T>): Promise<T> {
    const services = await buildServices(loadConfig(env()));
    try {
      return await fn(services);
    } finally {
      await services.close();
    }
  }

  it('kill -9 at any point: no task lost, none charged twice, none left unfinished', async () => {
    const key = await setup(100);
    const ids: string[] = [];
    // Tasks charged by an API-only process that dies before any hand-off...
    const api = await serve({ RUN_ENGINE: 'false' });
    for (let i = 0; i < 8; i++)
      ids.push((await call(api.url, key, 'POST', '/api/v1/jobs/createTask', { model: 'seedream-flash', input: { prompt: `early ${i}` } })).body.data.taskId);
    await stop(api.child, 'SIGKILL');
    // ...and tasks in every state when a worker dies.
    const first = await serve();
    const inputs = [
      { model: 'seedream-flash', input: { prompt: 'img' } },
      { model: 'suno-v6', input: { prompt: 'song' } },
      { model: 'seedance-1.5-pro', input: { prompt: 'clip', duration: 4, resolution: '480p' } },
      { model: 'seedream-flash', input: { prompt: 'doomed gengate:fail=501' } },
    ];
    for (let i = 0; i < 24; i++) ids.push((await call(first.url, key, 'POST', '/api/v1/jobs/createTask', inputs[i % 4])).body.data.taskId);
    const statesOn = (url: string, which: string[]) =>
      Promise.all(which.map(async (id) => (await call(url, key, 'GET', `/api/v1/jobs/recordInfo?taskId=${id}`)).body.data.state as string));
    // The kill comes while the worker has tasks in hand: some handed to the backend and still running.
    await eventually(
      async () => (await statesOn(first.url, ids)).some((s) => s === 'queuing' || s === 'generating'),
      30_000,
      'a task in the hands of the backend',
    );
    await stop(first.child, 'SIGKILL');

    const second = await serve();
    let states: string[] = [];
    await eventually(
      async () => (states = await statesOn(second.url, ids)).every((s) => s === 'success' || s === 'fail'),
      60_000,
      () => `every task final: ${states.join(' ')}`,
    );
    expect(states.filter((s) => s === 'fail')).toHaveLength(6);
    expect(states.filter((s) => s === 'success')).toHaveLength(26);
    await stop(second.child, 'SIGKILL');

    await inspect(async (s) => {
      const entries = await s.database.db.selectFrom('ledger_entries').select(['task_id', 'kind']).where('task_id', 'in', ids).execute();
      for (const id of ids) {
        const kinds = entries
          .filter((e) => e.task_id === id)
          .map((e) => e.kind)
          .sort();
        const failed = states[ids.indexOf(id)] === 'fail';
        expect(kinds, id).toEqual(failed ? ['charge', 'refund'] : ['charge']);
      }
      const finals = await s.database.db
        .selectFrom('task_events')
        .select('task_id')
        .where('task_id', 'in', ids)
        .where('to_state', 'in', ['success', 'fail'])
        .execute();
      expect(finals).toHaveLength(ids.length);
      await expectLedgerInvariant(s.database);
    });
  }, 240_000);

  it('50 identical requests with one Idempotency-Key over two processes: one task, one charge', async () => {
    const key = await setup(10);
    const [a, b] = await Promise.all([serve({ RUN_ENGINE: 'false' }), serve({ RUN_ENGINE: 'false' })]);
    const body = { model: 'nano-banana-2', input: { prompt: 'one and only' } };
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) => call(i % 2 ? a.url : b.url, key, 'POST', '/api/v1/jobs/createTask', body, { 'idempotency-key': 'twice-is-once' })),
    );
    expect(results.map((r) => r.status)).toEqual(Array(50).fill(200));
    expect(new Set(results.map((r) => r.body.data.taskId)).size).toBe(1);
    const balance = await call(a.url, key, 'GET', '/api/v1/user/balance');
    expect(balance.body.data.balance).toBe('9.9600');
    await Promise.all([stop(a.child, 'SIGKILL'), stop(b.child, 'SIGKILL')]);
    await inspect(async (s) => {
      expect(await s.database.db.selectFrom('tasks').select('id').execute()).toHaveLength(1);
      expect(await s.database.db.selectFrom('ledger_entries').select('id').where('kind', '=', 'charge').execute()).toHaveLength(1);
      await expectLedgerInvariant(s.database);
    });
  }, 240_000);
});
