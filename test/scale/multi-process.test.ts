import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { buildServices, type Services } from '../../src/services.js';
import { stop } from '../helpers/cli.js';
import { createTestDb, type TestDb } from '../helpers/db.js';
import { startS3, type TestS3 } from '../helpers/s3.js';
import { needs } from '../helpers/tools.js';
import { startReceiver } from '../callbacks/receiver.js';
import { eventually, expectLedgerInvariant } from '../tasks/support.js';
import { Processes, createTask, job, prompt, runUntil, type Answer } from './support.js';

const enabled = [needs('postgres'), needs('redis')].every(Boolean);

const ACCOUNTS = 20;
const TASKS = 2_000;
const RICH_MICROS = 10_000_000; // $10: some 500 tasks, more than the load sends
const POOR_MICROS = 800_000; // $0.80: some 40 tasks, then refused while the refunds trickle in (balances racing to zero)
const LIMIT = 10; // write limit of the rate-limited account, per 60 s window

/**
 * DECISIONS §17, issue 9: 3 API processes and 2 workers (real `gengate serve` children) over one
 * PostgreSQL, Redis and an S3 emulator; 2,000 tasks from 20 accounts, repeated idempotency keys,
 * balances racing to zero, one worker killed with SIGKILL mid-run and restarted.
 */
describe.skipIf(!enabled)('3 API processes and 2 workers on PostgreSQL, Redis and S3', () => {
  let db: TestDb;
  let s3: TestS3;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let services: Services;
  let procs: Processes;
  const dataDirs: string[] = [];
  /** Each process gets its own DATA_DIR: nothing may depend on a shared disk. */
  const own = () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'gengate-scale-'));
    dataDirs.push(dir);
    return { DATA_DIR: dir };
  };

  beforeAll(async () => {
    db = await createTestDb('postgres');
    s3 = await startS3();
    // The first delivery of a fifth of the tasks (number ending in 0 or 7) fails: the retry must carry the same webhook-id.
    receiver = await startReceiver((p, count) => (count === 1 && /n\d*[07]$/.test(p) ? 500 : 200));
    const env = {
      DATABASE_URL: db.url,
      REDIS_URL: process.env.TEST_REDIS_URL!,
      ...s3.env,
      FIRST_RUN_ACCOUNT: 'false',
      // Every process has its own DATA_DIR, so the key that seals webhook secrets must come from the settings.
      GENGATE_SECRET_KEY: 'scale-test-secret-key-0123456789abcdef',
      LOG_LEVEL: 'warn',
      LOCAL_QUEUE_MS: '20',
      LOCAL_GENERATE_MS: '50',
      ENGINE_POLL_MS: '200', // also how often a backend job is looked at; new work wakes workers through Redis
      ENGINE_LEASE_MS: '2000',
      ENGINE_RETRY_MS: '50',
      ENGINE_CONCURRENCY: '16',
      CALLBACK_RETRY_DELAYS_MS: '100,200,400',
      ALLOW_PRIVATE_NETWORK: 'true',
      MODERATION_IMAGES: 'off',
      RATE_LIMIT_WINDOW_SECONDS: '60',
      RATE_LIMIT_WRITE: '1000000',
      RATE_LIMIT_READ: '1000000',
      RATE_LIMIT_PUBLIC: '1000000',
    };
    // The test's own view of the system (accounts, checks); it runs no engine. Migrations happen here, once.
    services = await buildServices(loadConfig({ ...env, ...own() }));
    procs = new Processes(env);
  }, 240_000);

  afterAll(async () => {
    await procs?.stopAll();
    await services?.close();
    await receiver?.close();
    await s3?.close();
    await db?.drop();
    for (const d of dataDirs) rmSync(d, { recursive: true, force: true });
  });

  it('every task final, one charge per key, no overdraft, refunds once, shared rate limit, stable webhook-ids', async () => {
    const keys: string[] = [];
    for (let a = 0; a < ACCOUNTS; a++) keys.push((await services.accounts.create(`scale-${a}`, a % 2 ? POOR_MICROS : RICH_MICROS)).apiKey);
    const limited = await services.accounts.create('limited', RICH_MICROS);
    await services.accounts.setLimits(limited.account.id, { write: LIMIT });

    const apis = await Promise.all([0, 1, 2].map(() => procs.start('api', own())));
    const workers = await Promise.all([0, 1].map(() => procs.start('worker', own())));
    const ports = apis.map((p) => p.url);
    // A worker answers health and metrics only.
    expect((await fetch(`${workers[0]!.url}/readyz`)).status).toBe(200);
    expect((await fetch(`${workers[0]!.url}/api/v1/jobs/recordInfo?taskId=x`)).status).toBe(404);

    // The rate limit holds across processes: 30 requests at once over the 3 API processes, LIMIT pass.
    const burst = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        fetch(`${ports[i % 3]}/api/v1/jobs/createTask`, {
          method: 'POST',
          headers: { authorization: `Bearer ${limited.apiKey}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'seedream-flash', input: { prompt: 'scale', seed: 7, output_format: 'jpeg' } }),
        }).then((r) => r.status),
      ),
    );
    expect(burst.filter((s) => s === 200)).toHaveLength(LIMIT);
    expect(burst.filter((s) => s === 429)).toHaveLength(30 - LIMIT);

    // The load: requests from the 20 accounts in turn until 2,000 tasks are accepted; every 10th is
    // sent twice at once, to two API processes, with one Idempotency-Key.
    const answers: Answer[] = [];
    const accepted = new Set<string>();
    let killed: Promise<unknown> | null = null;
    let restarted: Promise<unknown> | null = null;
    await runUntil(
      32,
      async (i) => {
        const one = job(i, ACCOUNTS, receiver.url);
        const sends = [createTask(ports[i % 3]!, keys[one.account]!, one)];
        if (one.twice) sends.push(createTask(ports[(i + 1) % 3]!, keys[one.account]!, one));
        for (const a of await Promise.all(sends)) {
          answers.push(a);
          if (a.taskId) accepted.add(a.taskId);
        }
        // One worker dies with SIGKILL a third of the way in and comes back at two thirds.
        if (accepted.size >= TASKS / 3 && !killed) killed = stop(workers[0]!.child, 'SIGKILL');
        if (accepted.size >= (2 * TASKS) / 3 && !restarted) restarted = procs.start('worker', own());
      },
      () => accepted.size < TASKS,
    );
    await killed;
    await restarted;
    expect(accepted.size).toBeGreaterThanOrEqual(TASKS);

    // Every answer is a task or a refusal for the balance; a replayed key names the same task.
    for (const a of answers) expect([200, 402], JSON.stringify(a)).toContain(a.status);
    const byKey = new Map<string, Set<string>>();
    for (const a of answers.filter((x) => x.status === 200)) byKey.set(a.job.key, (byKey.get(a.job.key) ?? new Set()).add(a.taskId!));
    for (const [key, ids] of byKey) expect(ids.size, key).toBe(1);
    const taskIds = [...byKey.values()].map((ids) => [...ids][0]!);
    expect(answers.filter((a) => a.status === 402).length).toBeGreaterThan(0); // the poor accounts ran dry
    const { db: q } = services.database;

    // Every task final (the killed worker's leases run out and the others take its tasks over).
    let open = -1;
    await eventually(
      async () => {
        const row = await q
          .selectFrom('tasks')
          .select(sql<number>`count(*)`.as('n'))
          .where('state', 'not in', ['success', 'fail'])
          .executeTakeFirstOrThrow();
        return (open = Number(row.n)) === 0;
      },
      150_000,
      () => `every task final; ${open} still open`,
    );
    const tasks = await q.selectFrom('tasks').select(['id', 'state', 'account_id']).execute();
    expect(tasks).toHaveLength(taskIds.length + LIMIT);
    expect(new Set(tasks.map((t) => t.id))).toEqual(new Set([...taskIds, ...tasks.filter((t) => t.account_id === limited.account.id).map((t) => t.id)]));

    // One charge per task; every failed task refunded exactly once, in full; no refund for a success.
    const entries = await q.selectFrom('ledger_entries').select(['task_id', 'kind', 'amount_micros']).where('task_id', 'is not', null).execute();
    const kinds = new Map<string, Array<{ kind: string; amount: number }>>();
    for (const e of entries) kinds.set(e.task_id!, [...(kinds.get(e.task_id!) ?? []), { kind: e.kind, amount: Number(e.amount_micros) }]);
    const failed = tasks.filter((t) => t.state === 'fail');
    expect(failed.length).toBeGreaterThan(0);
    for (const t of tasks) {
      const mine = kinds.get(t.id) ?? [];
      const charge = mine.filter((e) => e.kind === 'charge');
      expect(charge, t.id).toHaveLength(1);
      const refunds = mine.filter((e) => e.kind === 'refund');
      expect(refunds, t.id).toHaveLength(t.state === 'fail' ? 1 : 0);
      if (t.state === 'fail') expect(refunds[0]!.amount).toBe(-charge[0]!.amount);
    }
    // Failures are exactly the tasks whose prompt asked for one.
    const wantFail = new Set(answers.filter((a) => a.status === 200 && prompt(Number(a.job.key.split('-n')[1])).fails).map((a) => a.taskId));
    expect(new Set(failed.map((t) => t.id))).toEqual(wantFail);
    // No overdraft, and for every account balance = sum of its ledger entries.
    await expectLedgerInvariant(services.database);

    // Every callback delivered, each task's deliveries under one webhook-id, distinct across tasks.
    const delivered = async () =>
      Number(
        (
          await q
            .selectFrom('callbacks')
            .select(sql<number>`count(*)`.as('n'))
            .where('status', '=', 'delivered')
            .executeTakeFirstOrThrow()
        ).n,
      );
    await eventually(async () => (await delivered()) >= taskIds.length, 60_000, 'every callback delivered');
    expect(await delivered()).toBe(taskIds.length);
    const idsByTask = new Map<string, Set<string>>();
    for (const r of receiver.received) {
      const taskId = /"taskId":"([^"]+)"/.exec(r.body)![1]!;
      idsByTask.set(taskId, (idsByTask.get(taskId) ?? new Set()).add(String(r.headers['webhook-id'])));
    }
    expect(new Set(idsByTask.keys())).toEqual(new Set(taskIds));
    for (const [taskId, ids] of idsByTask) expect(ids.size, taskId).toBe(1);
    expect(new Set([...idsByTask.values()].map((s) => [...s][0])).size).toBe(taskIds.length);
    expect(receiver.received.length).toBeGreaterThan(taskIds.length); // the failed first deliveries were retried
  }, 300_000);
});
