import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnServe, stop } from '../helpers/cli.js';
import { dialects } from '../helpers/db.js';
import { openConnection } from '../../src/store/index.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { startHeldFalRoute } from '../fakes/fal.js';
import { FAST, create, eventually, expectLedgerInvariant, info, settle, taskEntries } from '../tasks/support.js';

const MODEL = 'google/nano-banana';

/**
 * SIGSTOPs the worker at a moment it holds no open transaction, thawing and trying again when it
 * does. A process frozen inside a write transaction blocks every writer (SQLite has one write lock;
 * PostgreSQL keeps its row locks): that is the database's rule, not the lease's subject here.
 */
async function freezeOutsideTransaction(child: ChildProcess, dialect: 'sqlite' | 'postgres', url: string): Promise<void> {
  const open = await openProbe(dialect, url);
  try {
    for (let i = 0; i < 50; i++) {
      child.kill('SIGSTOP');
      if (!(await open.busy())) return;
      child.kill('SIGCONT');
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error('the worker was inside a transaction at each of 50 tries');
  } finally {
    await open.close();
  }
}

/** A separate connection that tells whether another connection holds a transaction open. */
async function openProbe(dialect: 'sqlite' | 'postgres', url: string): Promise<{ busy(): Promise<boolean>; close(): Promise<void> }> {
  if (dialect === 'sqlite') {
    const conn = openConnection(url.replace(/^sqlite:/, ''));
    conn.exec('PRAGMA busy_timeout = 200');
    return {
      busy: async () => {
        try {
          conn.exec('BEGIN IMMEDIATE');
          conn.exec('ROLLBACK');
          return false;
        } catch {
          return true;
        }
      },
      close: async () => void conn.close(),
    };
  }
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  return {
    busy: async () => {
      await new Promise((r) => setTimeout(r, 50)); // a statement running at SIGSTOP shows its state a moment later
      const r = await client.query("select count(*)::int as n from pg_stat_activity where datname = current_database() and state like 'idle in transaction%'");
      return r.rows[0].n > 0;
    },
    close: () => client.end(),
  };
}

/**
 * Decision 0014: a real `gengate serve --role worker` frozen with SIGSTOP in the middle of a submit
 * to a paying upstream (a fake fal, which cannot be asked twice) until its lease has run out. The
 * test's own engine takes the task over; the frozen worker, resumed with SIGCONT, finds its
 * accepted submit no longer the task's and cancels that upstream job. Nothing is charged, refunded
 * or moved twice, and the worker goes on working.
 */
describe.each(dialects())('a worker frozen past its lease on %s', (dialect) => {
  let s: TestServer;
  let fal: Awaited<ReturnType<typeof startHeldFalRoute>>['fal'];
  let catalog = '';
  let frozen: ChildProcess | undefined;
  let scratch = '';
  /** While set, the fake holds its answers to submits until it resolves. */
  let hold: Promise<void> | null = null;

  beforeAll(async () => {
    scratch = mkdtempSync(path.join(tmpdir(), 'gengate-frozen-'));
    ({ fal, catalog } = await startHeldFalRoute(scratch, 'fal-frozen', 'FROZEN_FAL_KEY', MODEL, () => hold));
    const env = {
      ...FAST,
      GENGATE_CATALOG: catalog,
      FROZEN_FAL_KEY: 'fal-frozen',
      ALLOW_PRIVATE_NETWORK: 'true',
      UPSTREAM_POLL_MS: '20',
      ENGINE_LEASE_MS: '1000',
    };
    // The API and the test's own engine (run by hand); the worker is a separate process over the same database.
    s = await startServer(dialect, env);
    const worker = await spawnServe({ ...env, DATABASE_URL: s.db.url, DATA_DIR: path.join(scratch, 'worker'), FIRST_RUN_ACCOUNT: 'false' }, [
      '--role',
      'worker',
    ]);
    frozen = worker.child;
  }, 240_000);
  afterAll(async () => {
    if (frozen) await stop(frozen, 'SIGKILL');
    await s?.close();
    await fal?.close();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  const submits = (prompt: string) => fal.calls.filter((c) => c.method === 'POST' && (c.json as { prompt?: string })?.prompt === prompt);

  it('SIGSTOP during a submit, lease taken over, SIGCONT: one submit, the orphaned job cancelled, the task failed and refunded once', async () => {
    const acc = await s.account(1);
    let answer = () => {};
    hold = new Promise<void>((resolve) => (answer = resolve));
    const id = await create(s, acc.key, MODEL, { prompt: 'frozen mid-submit' });
    await eventually(async () => submits('frozen mid-submit').length === 1);
    await freezeOutsideTransaction(frozen!, dialect, s.db.url);
    hold = null;
    answer(); // the upstream accepts; the answer waits in the frozen worker's socket

    // Once the frozen worker's lease has run out, this engine takes the task: an interrupted hand-off to fal fails it (refunded).
    await eventually(async () => {
      await s.services.engine.tick();
      return (await info(s, acc.key, id)).state === 'fail';
    });
    frozen!.kill('SIGCONT');
    const [job] = [...fal.requests.entries()].filter(([, r]) => r.prompt === 'frozen mid-submit').map(([jobId]) => jobId);
    await eventually(async () => fal.requests.get(job!)?.cancelled === true);

    expect(submits('frozen mid-submit')).toHaveLength(1);
    expect(fal.calls.filter((c) => c.method === 'PUT' && c.path.endsWith(`/requests/${job}/cancel`))).toHaveLength(1);
    const t = await info(s, acc.key, id);
    expect([t.state, t.failCode]).toEqual(['fail', 503]);
    const entries = await taskEntries(s, id);
    expect(entries.refund).toBe(-entries.charge!);
    const events = await s.services.database.db.selectFrom('task_events').select('to_state').where('task_id', '=', id).execute();
    expect(events.map((e) => e.to_state)).toEqual(['waiting', 'fail']);
    await expectLedgerInvariant(s.services.database);

    // The resumed worker goes on working: the next task is its to finish.
    const next = await create(s, acc.key, MODEL, { prompt: 'after the thaw' });
    expect((await settle(s, acc.key, next, 20_000)).state).toBe('success');
    expect(submits('after the thaw')).toHaveLength(1);
  }, 240_000);
});
