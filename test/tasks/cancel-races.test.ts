import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers/db.js';
import { spawnServe, stop } from '../helpers/cli.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { FAST, create, eventually, expectLedgerInvariant, settle, taskEntries } from './support.js';

/**
 * Cancels racing the engine (decision 1901): whatever the interleaving of claim, submit, progress,
 * finish and cancel, a task gets at most one successful cancel and at most one refund, and a task
 * failed by a cancel is refunded exactly once.
 */
describe.each(dialects())('cancel races on %s', (dialect) => {
  let s: TestServer;

  beforeAll(async () => {
    s = await startServer(dialect, { ...FAST, LOCAL_GENERATE_MS: '150', ENGINE_CONCURRENCY: '8', AUTH_CACHE_MS: '0' });
  });
  afterAll(async () => {
    await s?.close();
  });

  const cancelAt = (url: string, key: string, taskId: string) =>
    fetch(`${url}/api/v1/jobs/cancel`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ taskId }),
    }).then(async (r) => ({ status: r.status, body: (await r.json()) as { error?: string } }));
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  /** Each task: at most one 200; a 200 means fail 499 refunded exactly once; otherwise no refund unless the task failed on its own. */
  async function expectOnce(key: string, ids: string[], answers: Map<string, number[]>) {
    let cancelled = 0;
    for (const id of ids) {
      const t = await settle(s, key, id);
      const statuses = answers.get(id)!;
      for (const status of statuses) expect([200, 409], `${id}: ${statuses.join(',')}`).toContain(status);
      const oks = statuses.filter((x) => x === 200).length;
      expect(oks, `${id}: ${statuses.join(',')}`).toBeLessThanOrEqual(1);
      const rows = await s.services.database.db.selectFrom('ledger_entries').select('kind').where('task_id', '=', id).execute();
      expect(rows.filter((r) => r.kind === 'refund').length).toBeLessThanOrEqual(1);
      if (oks === 1) {
        cancelled++;
        expect([t.state, t.failCode, t.refunded]).toEqual(['fail', 499, true]);
        const entries = await taskEntries(s, id);
        expect(entries.refund).toBe(-entries.charge!);
      } else {
        expect(t.failCode, JSON.stringify(t)).not.toBe(499);
        if (t.state === 'success') expect(await taskEntries(s, id)).toEqual({ charge: expect.any(Number) });
      }
    }
    await expectLedgerInvariant(s.services.database);
    return cancelled;
  }

  it('50 tasks, 100 concurrent cancels while the engine works them: one refund per cancelled task, never two', async () => {
    const acc = await s.account(20);
    const ids: string[] = [];
    for (let i = 0; i < 50; i++) ids.push(await create(s, acc.key, 'seedream-flash', { prompt: `race ${i % 5}` }));
    s.services.engine.start();
    const answers = new Map<string, number[]>(ids.map((id) => [id, []]));
    // Two cancels per task, spread over the time the engine takes to claim, hand over, poll and finish them.
    await Promise.all(
      ids.flatMap((id, i) =>
        [0, 1].map(async (k) => {
          await sleep((i % 3) * 1_000 + ((i * 7 + k * 13) % 25) * 40);
          const r = await cancelAt(s.url, acc.key, id);
          if (r.status === 409) expect(r.body.error).toBe('task_not_cancellable');
          answers.get(id)!.push(r.status);
        }),
      ),
    );
    const cancelled = await expectOnce(acc.key, ids, answers);
    expect(cancelled).toBeGreaterThan(0);
    await s.services.engine.stop();
  }, 240_000);

  it('across processes: a spawned gengate runs the engine and answers cancels too; each task is cancelled and refunded exactly once', async () => {
    const acc = await s.account(20);
    const child = await spawnServe({
      DATABASE_URL: s.db.url,
      DATA_DIR: s.db.dir,
      AUTH_CACHE_MS: '0',
      LOCAL_QUEUE_MS: '200',
      LOCAL_GENERATE_MS: '400',
      ENGINE_POLL_MS: '20',
      ENGINE_RETRY_MS: '0',
    });
    try {
      const ids: string[] = [];
      for (let i = 0; i < 20; i++) ids.push(await create(s, acc.key, 'seedream-flash', { prompt: `across ${i % 3}` }));
      // The other process's engine takes some of them over before the cancels arrive.
      await eventually(async () => {
        const moved = await s.services.database.db.selectFrom('tasks').select('id').where('id', 'in', ids).where('state', '!=', 'waiting').execute();
        return moved.length > 0;
      });
      const answers = new Map<string, number[]>(ids.map((id) => [id, []]));
      await Promise.all(
        ids.flatMap((id) =>
          [s.url, child.url].map(async (url) => {
            const r = await cancelAt(url, acc.key, id);
            answers.get(id)!.push(r.status);
          }),
        ),
      );
      const cancelled = await expectOnce(acc.key, ids, answers);
      expect(cancelled).toBeGreaterThan(0);
      // Both processes answered: each task got one 200 and one 409, or two 409s if the engine finished it first.
      for (const id of ids) expect(answers.get(id)!.sort()).toEqual(expect.arrayContaining([409]));
    } finally {
      await stop(child.child);
    }
  }, 240_000);
});
