import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { buildServices } from '../../src/services.js';
import { MICROS_PER_USD } from '../../src/billing/index.js';
import { spawnServe, stop } from '../helpers/cli.js';
import { createTestDb, dialects, type TestDb } from '../helpers/db.js';
import type { TestServer } from '../helpers/server.js';
import { noticeToken, postNotice, sameApiUpstream, serverWithUpstream, type FakeUpstream } from '../tasks/fake-upstream.js';
import { UNLIMITED, create, eventually, info, settle } from '../tasks/support.js';

/**
 * Issue 21, decision 2102: a handed task whose upstream reports no change is polled from the
 * worker's memory without writing to the database; its `run_at` (pushed ahead by the watch lease)
 * is the lease, so a worker that stops polling loses nothing, and an upstream notice still wakes it.
 */
describe.each(dialects())('tasks in flight at an upstream on %s', (dialect) => {
  let s: TestServer;
  let fake: FakeUpstream;
  beforeAll(async () => {
    ({ s, fake } = await serverWithUpstream(dialect, {
      UPSTREAM_POLL_MS: '40',
      // The watch lease is twice this: 2 s, renewed once half of it is used.
      ENGINE_LEASE_MS: '1000',
      // The claim loop's own look for due work (a transaction even when it finds none) comes rarely.
      ENGINE_POLL_MS: '2000',
    }));
  });
  afterAll(async () => {
    await s.close();
    await fake.close();
  });
  const row = (id: string) =>
    s.services.database.db.selectFrom('tasks').select(['state', 'run_at', 'locked_by', 'locked_until']).where('id', '=', id).executeTakeFirstOrThrow();

  it('an unchanged poll writes nothing: polls continue from memory, the database sees only the lease renewals', async () => {
    fake.state.taskState = 'generating';
    const a = await s.account(1);
    const id = await create(s, a.key, 'nano-banana-2', { prompt: 'a slow owl' });
    await eventually(async () => (await info(s, a.key, id)).state === 'generating');
    await eventually(() => s.services.engine.held === 1);
    expect(await s.services.metrics.render()).toMatch(/^gengate_engine_held_tasks 1$/m);
    const polls0 = fake.state.recordInfos;
    const writes0 = s.services.database.writes();
    const t0 = Date.now();
    await eventually(() => fake.state.recordInfos - polls0 >= 20);
    const polls = fake.state.recordInfos - polls0;
    const writes = s.services.database.writes();
    const tx = writes.transactions - writes0.transactions;
    // Without the watch every poll is a claim and a release: two transactions, 40 for these 20 polls or more.
    // Now only timers write: a lease renewal at most once a second (once half of the 2 s lease is used) and
    // the claim loop's look for due work every 2 s. Counted against the time that passed, not against the
    // polls, so a busy machine that polls slowly passes too.
    const timed = Math.ceil((1.5 * (Date.now() - t0)) / 1000) + 2;
    expect(tx, `${tx} write transactions for ${polls} polls in ${Date.now() - t0} ms`).toBeLessThanOrEqual(Math.min(timed, 2 * polls - 1));
    if (writes.rows !== null) expect(writes.rows - writes0.rows!).toBeLessThanOrEqual(Math.min(timed, 2 * polls - 1));
    // The task stays this worker's, due only when its watch lease runs out.
    const r = await row(id);
    expect(r.state).toBe('generating');
    expect(r.locked_by).toMatch(new RegExp(`^${s.services.engine.workerId}\\.`));
    expect(Number(r.run_at)).toBeGreaterThan(Date.now());
    fake.state.taskState = 'success';
    expect((await settle(s, a.key, id, 10_000)).state).toBe('success');
    await eventually(() => s.services.engine.held === 0);
  });

  it('a stopping worker gives its held tasks back at once', async () => {
    fake.state.taskState = 'generating';
    const a = await s.account(1);
    const id = await create(s, a.key, 'nano-banana-2', { prompt: 'a resting crane' });
    await eventually(async () => (await info(s, a.key, id)).state === 'generating' && s.services.engine.held === 1);
    await s.services.engine.stop();
    expect(s.services.engine.held).toBe(0);
    const r = await row(id);
    expect(r.state).toBe('generating');
    expect(r.locked_by).toBeNull();
    expect(Number(r.run_at)).toBeLessThanOrEqual(Date.now());
    fake.state.taskState = 'success';
    s.services.engine.start();
    expect((await settle(s, a.key, id, 10_000)).state).toBe('success');
  });

  it('a hand-off that ends while the worker stops is given back too, not left under its watch lease', async () => {
    fake.state.taskState = 'generating';
    let accept = () => {};
    fake.state.createHold = new Promise<void>((resolve) => (accept = resolve));
    const a = await s.account(1);
    const id = await create(s, a.key, 'nano-banana-2', { prompt: 'a crane on its way' });
    await eventually(async () => fake.creates.some((c) => c.key === `gengate-${id}`));
    // The submit waits for the upstream's answer while the worker is told to stop; then the answer comes.
    const stopped = s.services.engine.stop();
    fake.state.createHold = null;
    accept();
    await stopped;
    expect(s.services.engine.held).toBe(0);
    const r = await row(id);
    expect(r.state).toBe('queuing');
    expect(r.locked_by).toBeNull();
    // Due at its first poll (40 ms), not at the end of a 2 s watch lease.
    expect(Number(r.run_at)).toBeLessThanOrEqual(Date.now() + 500);
    fake.state.taskState = 'success';
    s.services.engine.start();
    expect((await settle(s, a.key, id, 10_000)).state).toBe('success');
  });
});

/** kill -9 of a worker holding tasks in memory: nothing lost, taken over when the watch lease runs out, never before. */
describe.each(dialects())('a worker killed while it holds tasks on %s', (dialect) => {
  let db: TestDb;
  let fake: FakeUpstream;
  const children: ChildProcess[] = [];
  afterAll(async () => {
    for (const c of children) await stop(c, 'SIGKILL');
    await fake?.close();
    await db?.drop();
  });

  it('another worker finishes every task once the leases have run out', async () => {
    db = await createTestDb(dialect);
    const upstream = await sameApiUpstream(db.dir);
    fake = upstream.fake;
    fake.state.taskState = 'generating';
    const env = {
      DATA_DIR: db.dir,
      DATABASE_URL: db.url,
      FIRST_RUN_ACCOUNT: 'false',
      ...upstream.env,
      ENGINE_POLL_MS: '20',
      UPSTREAM_POLL_MS: '40',
      ENGINE_LEASE_MS: '1000',
      ...UNLIMITED,
    };
    const setup = await buildServices(loadConfig(env));
    const { apiKey } = await setup.accounts.create('killed', 10 * MICROS_PER_USD);
    const first = await spawnServe(env);
    children.push(first.child);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await fetch(`${first.url}/api/v1/jobs/createTask`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'nano-banana-2', input: { prompt: `killed ${i}` } }),
      });
      ids.push(((await r.json()) as { data: { taskId: string } }).data.taskId);
    }
    const rows = () => setup.database.db.selectFrom('tasks').select(['id', 'state', 'run_at', 'locked_by', 'completed_at']).where('id', 'in', ids).execute();
    // Every task held: generating, claimed, due only when its watch lease runs out.
    await eventually(async () => (await rows()).every((r) => r.state === 'generating' && r.locked_by !== null && Number(r.run_at) > Date.now()));
    await stop(first.child, 'SIGKILL');
    const leaseEnds = new Map((await rows()).map((r) => [r.id, Number(r.run_at)]));
    fake.state.taskState = 'success';
    const second = await spawnServe(env);
    children.push(second.child);
    await eventually(async () => (await rows()).every((r) => r.state === 'success'), 20_000);
    for (const r of await rows()) {
      expect(Number(r.completed_at)).toBeGreaterThanOrEqual(leaseEnds.get(r.id)!);
      expect(r.locked_by).toBeNull();
    }
    // One charge per task, nothing refunded.
    const entries = await setup.database.db.selectFrom('ledger_entries').select(['task_id', 'kind']).where('task_id', 'in', ids).execute();
    expect(entries.filter((e) => e.kind === 'charge')).toHaveLength(5);
    expect(entries.filter((e) => e.kind !== 'charge')).toHaveLength(0);
    await setup.close();
    // Two `gengate serve` processes start one after the other (each loads the sources through tsx: 5-15 s on a busy machine).
  }, 240_000);
});

describe.each(dialects())('an upstream notice for a held task on %s', (dialect) => {
  let s: TestServer;
  let fake: FakeUpstream;
  beforeAll(async () => {
    ({ s, fake } = await serverWithUpstream(dialect, {
      UPSTREAM_WEBHOOKS: 'true',
      PUBLIC_BASE_URL: 'https://gengate.example.com',
      // Held tasks would next be polled in 10 minutes: only the notice can finish them in time.
      UPSTREAM_POLL_MS: '600000',
    }));
  });
  afterAll(async () => {
    await s.close();
    await fake.close();
  });

  it('wakes the task at once: the worker holding it polls it without waiting for its timer', async () => {
    fake.state.taskState = 'generating';
    const a = await s.account(1);
    const id = await create(s, a.key, 'nano-banana-2', { prompt: 'a heron' });
    await eventually(async () => (await info(s, a.key, id)).state === 'queuing');
    const token = noticeToken(fake, id);
    const notify = () => postNotice(s, token);
    // A first notice: the step hears "generating" (a change: written), the next one hears it again and keeps the task.
    expect((await notify()).status).toBe(200);
    await eventually(async () => (await info(s, a.key, id)).state === 'generating');
    expect((await notify()).status).toBe(200);
    await eventually(() => s.services.engine.held === 1);
    fake.state.taskState = 'success';
    expect((await notify()).status).toBe(200);
    // Its next poll is 10 minutes away: only the notice can finish it within settle's limit.
    expect((await settle(s, a.key, id)).state).toBe('success');
    await eventually(() => s.services.engine.held === 0);
  });
});
