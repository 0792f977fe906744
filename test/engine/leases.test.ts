import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { buildServices, type Services } from '../../src/services.js';
import { dialects, onPostgres } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { startHeldFalRoute } from '../fakes/fal.js';
import { FAST, MovableClock, create, eventually, expectLedgerInvariant, info, taskEntries } from '../tasks/support.js';

const MODEL = 'google/nano-banana';

/**
 * Fenced leases (decision 0014): two engines over one database, driven by hand. Engine A claims a
 * task and stalls in the middle of its step (a blocked event loop, a frozen process); its lease is
 * expired by hand and engine B takes the task over. Whatever A does when it resumes must not reach
 * the paying upstream (a fake fal, which does not de-duplicate submits) or the task.
 */
describe.each(dialects())('fenced leases on %s', (dialect) => {
  let s: TestServer;
  let b: Services;
  let fal: Awaited<ReturnType<typeof startHeldFalRoute>>['fal'];
  let catalog = '';
  /** While set, the fake holds its answers to submits until it resolves. */
  let hold: Promise<void> | null = null;
  let env: Record<string, string>;
  let scratch = '';

  beforeAll(async () => {
    scratch = mkdtempSync(path.join(tmpdir(), 'gengate-leases-'));
    ({ fal, catalog } = await startHeldFalRoute(scratch, 'fal-lease', 'LEASE_FAL_KEY', MODEL, () => hold));
    env = { ...FAST, GENGATE_CATALOG: catalog, LEASE_FAL_KEY: 'fal-lease', ALLOW_PRIVATE_NETWORK: 'true', UPSTREAM_POLL_MS: '20', ENGINE_MAX_ATTEMPTS: '2' };
    s = await startServer(dialect, env);
    b = await buildServices(loadConfig({ ...env, DATABASE_URL: s.db.url, DATA_DIR: s.db.dir, LOG_LEVEL: 'silent' }));
  });
  afterAll(async () => {
    await b?.close();
    await s?.close();
    await fal?.close();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  /** Engine A: the test server's own. */
  const a = () => s.services.engine;
  /** The lease of engine A runs out (by hand: as if its process had stalled for longer than ENGINE_LEASE_MS). */
  const expire = (id: string) => s.services.database.tx((w) => w.updateTable('tasks').set({ locked_until: 0 }).where('id', '=', id).execute());
  const submits = (prompt: string) => fal.calls.filter((c) => c.method === 'POST' && (c.json as { prompt?: string })?.prompt === prompt);
  const requestOf = (prompt: string) => [...fal.requests.entries()].filter(([, r]) => r.prompt === prompt).map(([id]) => id);
  /** Engine B works the task until it is final. */
  const finishOnB = (key: string, id: string) =>
    eventually(async () => {
      await b.engine.tick();
      const t = await info(s, key, id);
      return t.state === 'success' || t.state === 'fail' ? t : null;
    });

  it('a worker whose lease ran out before its hand-off does not submit: the upstream sees one submit, from the new holder', async () => {
    const acc = await s.account(1);
    const id = await create(s, acc.key, MODEL, { prompt: 'one submit only' });
    const [held] = await a().claim(1);
    expect(held?.id).toBe(id);
    await expire(id);
    expect(await b.engine.tick()).toBe(1);
    expect(submits('one submit only')).toHaveLength(1);
    expect((await info(s, acc.key, id)).state).toBe('queuing');

    // A resumes its step with its stale claim: its hand-off record matches nothing, so it does not submit.
    await a().run(held!);
    expect(submits('one submit only')).toHaveLength(1);
    const t = await finishOnB(acc.key, id);
    expect(t.state).toBe('success');
    expect(await taskEntries(s, id)).toEqual({ charge: expect.any(Number) });
    expect(fal.calls.filter((c) => c.method === 'PUT')).toHaveLength(0);
  });

  it('a submit accepted after the lease ran out loses its compare-and-set, and the upstream job is cancelled', async () => {
    const acc = await s.account(1);
    const id = await create(s, acc.key, MODEL, { prompt: 'orphaned job' });
    let answer = () => {};
    hold = new Promise<void>((resolve) => (answer = resolve));
    // A claims, records the hand-off and submits; the upstream holds its answer.
    const stepping = a().tick();
    await eventually(async () => submits('orphaned job').length === 1);
    await expire(id);
    // B finds a hand-off whose outcome was never recorded, on a route that cannot be asked twice: fail and refund.
    expect(await b.engine.tick()).toBe(1);
    expect((await info(s, acc.key, id)).state).toBe('fail');
    hold = null;
    answer();
    await stepping;

    const [job] = requestOf('orphaned job');
    expect(fal.calls.filter((c) => c.method === 'PUT' && c.path.endsWith(`/requests/${job}/cancel`))).toHaveLength(1);
    expect(fal.requests.get(job!)?.cancelled).toBe(true);
    expect(submits('orphaned job')).toHaveLength(1);
    const t = await info(s, acc.key, id);
    expect([t.state, t.failCode]).toEqual(['fail', 503]);
    const entries = await taskEntries(s, id);
    expect(entries.refund).toBe(-entries.charge!);
    const events = await s.services.database.db.selectFrom('task_events').select('to_state').where('task_id', '=', id).execute();
    expect(events.map((e) => e.to_state)).toEqual(['waiting', 'fail']);
    await expectLedgerInvariant(s.services.database);
  });

  it('attempts are counted at claim: a task whose workers keep stopping fails after ENGINE_MAX_ATTEMPTS claims, refunded', async () => {
    const acc = await s.account(1);
    const id = await create(s, acc.key, 'seedream-flash', { prompt: 'poison' });
    for (let i = 0; i < 2; i++) {
      const [held] = await a().claim(1);
      expect(held?.id).toBe(id);
      await expire(id); // the worker died holding it
    }
    expect(await b.engine.tick()).toBe(1);
    const t = await info(s, acc.key, id);
    expect([t.state, t.failCode]).toEqual(['fail', 503]);
    expect(t.failMsg).toContain('stopped 2 times');
    const entries = await taskEntries(s, id);
    expect(entries.refund).toBe(-entries.charge!);
  });

  it('a renewal that finds another claim on the task is counted as a lost lease; the step then drops its accepted job', async () => {
    // A worker with a short lease, so that it renews (every ENGINE_LEASE_MS / 3) while its submit waits.
    const h = await buildServices(loadConfig({ ...env, DATABASE_URL: s.db.url, DATA_DIR: s.db.dir, LOG_LEVEL: 'silent', ENGINE_LEASE_MS: '500' }));
    try {
      const lost = async () => /gengate_engine_heartbeat_failures_total\{reason="lost"\} (\d+)/.exec(await h.metrics.render())?.[1];
      expect(await lost()).toBe('0');
      const acc = await s.account(1);
      const id = await create(s, acc.key, MODEL, { prompt: 'renewal lost' });
      let answer = () => {};
      hold = new Promise<void>((resolve) => (answer = resolve));
      const stepping = h.engine.tick();
      await eventually(async () => submits('renewal lost').length === 1);
      // Another worker's claim, as it looks in the row once this lease ran out and was taken over.
      await s.services.database.tx((w) =>
        w
          .updateTable('tasks')
          .set({ locked_by: 'w_other.1', locked_until: Date.now() + 60_000 })
          .where('id', '=', id)
          .execute(),
      );
      await eventually(async () => (await lost()) === '1');
      hold = null;
      answer();
      await stepping;
      const [job] = requestOf('renewal lost');
      expect(fal.requests.get(job!)?.cancelled).toBe(true);
      // The other worker "dies"; B finds the interrupted hand-off and fails the task.
      await expire(id);
      expect((await finishOnB(acc.key, id)).state).toBe('fail');
      expect(await lost()).toBe('1');
    } finally {
      await h.close();
    }
  });

  onPostgres(dialect)('lease times come from the database clock: a worker whose clock runs ahead does not take over a live lease', async () => {
    const ahead = new MovableClock();
    ahead.advance(10 * 60_000);
    const c = await buildServices(loadConfig({ ...env, DATABASE_URL: s.db.url, DATA_DIR: s.db.dir, LOG_LEVEL: 'silent' }), { clock: ahead });
    try {
      const acc = await s.account(1);
      const id = await create(s, acc.key, MODEL, { prompt: 'clock skew' });
      const [held] = await a().claim(1);
      expect(held?.id).toBe(id);
      expect(await c.engine.tick()).toBe(0);
      await a().run(held!);
      expect(submits('clock skew')).toHaveLength(1);
      expect((await finishOnB(acc.key, id)).state).toBe('success');
    } finally {
      await c.close();
    }
  });
});
