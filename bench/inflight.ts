// Issue 21: many tasks in flight on one worker. A kie.ai-shaped fake upstream (bench/fake-kie.ts, its
// own process) whose jobs take at least 60 s; N tasks (10,000) created in one wave through the API of one
// GenGate process (ROLE=all, SQLite and PostgreSQL), all handed to the fake through one route of the
// kind BENCH_INFLIGHT_ROUTE (default same-api). While every task is in flight and nothing completes
// (the window, BENCH_INFLIGHT_HOLD_MS), it measures the worker's CPU per in-flight task per minute, its memory per in-flight
// task, and the database writes per upstream poll; then none lost, every task final, and completion
// to client: from the fake's completion to the client's callback received, p50 and p99. Each run
// (BENCH_INFLIGHT_RUNS, default `sqlite:notices,postgres:notices,sqlite:polling`) names its
// database and how completions are learnt: `notices` (UPSTREAM_WEBHOOKS=true; the fake posts a
// notice for every job but loses 1 in 100 on the way, which the safety-net polls must catch) or
// `polling` (UPSTREAM_WEBHOOKS=false; polls only, at UPSTREAM_POLL_MS growing with the job's age). After the
// window the fake completes the jobs in creation order, spread evenly over 60 s (N / 60 s: the rate
// a worker holding N jobs of 60 s sees in steady state), so every job lasts 60 s or more.
// Alone: `BENCH_ONLY=inflight npm run bench` or `npx tsx bench/inflight.ts`; BENCH_QUICK=1 for a small, fast run.
import http from 'node:http';
import net from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { cpuMs, rssMb, settle, startProcess, stopProcess } from './http.js';
import { freshDatabase } from './scale.js';
import { loadConfig } from '../src/config.js';
import { buildServices } from '../src/services.js';
import { openConnection } from '../src/store/index.js';

const quick = Boolean(process.env.BENCH_QUICK);
const TASKS = Number(process.env.BENCH_INFLIGHT_TASKS ?? (quick ? 1_000 : 10_000));
const JOB_MS = Number(process.env.BENCH_INFLIGHT_JOB_MS ?? (quick ? 20_000 : 60_000));
/** The window: everything in flight, nothing completing. */
const HOLD_MS = Number(process.env.BENCH_INFLIGHT_HOLD_MS ?? (quick ? 12_000 : 25_000));
/** The window opens this long after the go: every task has had its first poll (UPSTREAM_POLL_MS, 4 s) and its hand-off news is written. */
const SETTLE_MS = 6_000;
/** The route kind the model is sent to; the fake speaks kie.ai's jobs API, which `same-api` (and `kie`) read. */
const ROUTE = process.env.BENCH_INFLIGHT_ROUTE ?? 'same-api';
const MODEL = 'nano-banana-2';
const GOAL_KB = 10;
const GOAL_P99_MS = 250;

export interface Latency {
  n: number;
  p50Ms: number;
  p99Ms: number;
}

/** How completions reach GenGate in a run. */
export type Learnt = 'notices' | 'polling';

export interface InflightRun {
  database: 'sqlite' | 'postgres';
  learnt: Learnt;
  tasks: number;
  createErrors: number;
  createSeconds: number;
  /** Seconds from the first createTask until every task was handed to the upstream. */
  handedSeconds: number;
  final: number;
  success: number;
  lost: number;
  callbacksReceived: number;
  window: {
    seconds: number;
    inFlight: number;
    polls: number;
    pollsPerSec: number;
    cpuMs: number;
    /** Worker CPU milliseconds per in-flight task per minute. */
    cpuMsPerTaskMinute: number;
    /** tx calls of the process (metrics) in the window. */
    writeTx: number;
    /** tx calls of the process (metrics) per upstream poll. */
    writeTxPerPoll: number;
    /** tx calls of the process (metrics) per in-flight task per minute: a poll a minute that wrote each time would be 1. */
    writeTxPerTaskMinute: number;
    /** Rows written (SQLite: total_changes; PostgreSQL: tup_inserted + tup_updated + tup_deleted) per upstream poll. */
    rowsPerPoll: number;
    /** PostgreSQL: committed transactions (reads included) per upstream poll. */
    pgCommitsPerPoll?: number;
  };
  rssBeforeMb: number;
  rssInFlightMb: number;
  kbPerInFlightTask: number;
  /** Jobs whose notice reached GenGate. */
  webhook: Latency;
  /** Jobs learnt of by polling only: every job of a `polling` run, the lost notices of a `notices` run. */
  polling: Latency;
  pass: boolean;
}

/** A free TCP port on loopback (PUBLIC_BASE_URL must name the server's port before it starts). */
async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((ok) => s.listen(0, '127.0.0.1', ok));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise<void>((ok) => s.close(() => ok()));
  return port;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

function latency(values: number[]): Latency {
  const s = [...values].sort((a, b) => a - b);
  return { n: s.length, p50Ms: Math.round(percentile(s, 50)), p99Ms: Math.round(percentile(s, 99)) };
}

/** One counter of the process's /metrics text. */
async function metric(url: string, name: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
  return m ? Number(m[1]) : 0;
}

/** Task counts by state, read from outside the server (SQLite read-only, or a PostgreSQL client). */
interface Counter {
  byState(): Promise<Record<string, number>>;
  /** PostgreSQL: rows written and commits of the database so far (pg_stat_database). */
  pgStats(): Promise<{ rows: number; commits: number } | null>;
  close(): Promise<void>;
}

function sqliteCounter(file: string): Counter {
  const db = openConnection(file, { readonly: true });
  const q = db.prepare('select state, count(*) as n from tasks group by state');
  return {
    byState: async () => Object.fromEntries((q.all() as Array<{ state: string; n: number }>).map((r) => [r.state, r.n])),
    pgStats: async () => null,
    close: async () => void db.close(),
  };
}

async function postgresCounter(url: string): Promise<Counter> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  return {
    byState: async () => Object.fromEntries((await c.query('select state, count(*)::int as n from tasks group by state')).rows.map((r) => [r.state, r.n])),
    pgStats: async () => {
      // Other backends report their counts at most every second (PostgreSQL 15): let them.
      await sleep(1_100);
      const { rows } = await c.query(
        'select (tup_inserted + tup_updated + tup_deleted)::bigint as rows, xact_commit::bigint as commits from pg_stat_database where datname = current_database()',
      );
      return { rows: Number(rows[0].rows), commits: Number(rows[0].commits) };
    },
    close: () => c.end(),
  };
}

/** Runs the section once on one database. */
async function runOnce(database: 'sqlite' | 'postgres', learnt: Learnt, pgBase: string | undefined): Promise<InflightRun> {
  const dir = mkdtempSync(path.join(tmpdir(), 'gengate-inflight-'));
  const pgDb = database === 'postgres' ? await freshDatabase(pgBase!) : null;
  const started: Array<Awaited<ReturnType<typeof startProcess>>> = [];
  // The client's callback receiver: arrival time by task id.
  const arrived = new Map<string, number>();
  const receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = Date.now();
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { taskId?: string; data?: { taskId?: string } };
        const id = body.taskId ?? body.data?.taskId;
        if (id && !arrived.has(id)) arrived.set(id, at);
      } catch {
        // not counted
      }
      res.end('ok');
    });
  });
  await new Promise<void>((ok) => receiver.listen(0, '127.0.0.1', ok));
  const hook = `http://127.0.0.1:${(receiver.address() as net.AddressInfo).port}/hook`;
  let counter: Counter | null = null;
  try {
    const fakeEnv: Record<string, string> = learnt === 'notices' ? { FAKE_NOTIFY_EVERY: '1', FAKE_DROP_EVERY: '100' } : { FAKE_NOTIFY_EVERY: '0' };
    const fake = await startProcess(['bench/fake-kie.ts'], { FAKE_JOB_MS: String(JOB_MS), ...fakeEnv }, path.join(dir, 'fake.log'));
    started.push(fake);
    const catalog = path.join(dir, 'catalog.json');
    writeFileSync(catalog, JSON.stringify({ models: { [MODEL]: { routes: [{ backend: ROUTE, base_url: fake.url, key_env: 'FAKE_KIE_KEY' }] } } }));
    const port = await freePort();
    const env: Record<string, string> = {
      DATA_DIR: dir,
      PORT: String(port),
      PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
      ...(pgDb ? { DATABASE_URL: pgDb.url } : {}),
      NODE_ENV: process.env.BENCH_NODE_ENV ?? 'production',
      LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn',
      GENGATE_CATALOG: catalog,
      FAKE_KIE_KEY: 'bench-kie-key',
      UPSTREAM_WEBHOOKS: String(learnt === 'notices'),
      ALLOW_PRIVATE_NETWORK: 'true',
      FIRST_RUN_ACCOUNT: 'false',
      MODERATION_IMAGES: 'off',
      GENGATE_SECRET_KEY: 'bench-inflight-secret-key-0123456789abcdef',
      RATE_LIMIT_READ: '1000000000',
      RATE_LIMIT_WRITE: '1000000000',
      RATE_LIMIT_PUBLIC: '1000000000',
    };
    // The account, from this process before the server starts (migrations included).
    const setup = await buildServices(loadConfig({ ...process.env, ...env, LOG_LEVEL: 'silent' }));
    const { apiKey } = await setup.accounts.create('bench', 1_000_000 * 1_000_000);
    await setup.close();
    const server = await startProcess(['src/main.ts', 'serve'], env, path.join(dir, 'gengate.log'));
    started.push(server);
    const pid = server.child.pid!;
    counter = pgDb ? await postgresCounter(pgDb.url) : sqliteCounter(path.join(dir, 'gengate.db'));
    await settle(pid);
    const rssBeforeMb = rssMb(pid);

    // One wave: N createTask calls from 32 clients.
    const t0 = Date.now();
    let sent = 0;
    let createErrors = 0;
    // Each prompt is unique: the fake reports its jobs by prompt, whatever the route kind sends it.
    const promptOf = (i: number) => `in flight ${i}: a paper boat`;
    const byPrompt = new Map<string, string>();
    const body = (i: number) => JSON.stringify({ model: MODEL, input: { prompt: promptOf(i) }, callBackUrl: hook });
    const client = async () => {
      while (sent < TASKS) {
        const i = sent++;
        const r = await fetch(`${server.url}/api/v1/jobs/createTask`, {
          method: 'POST',
          body: body(i),
          headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
        }).catch(() => null);
        if (!r || r.status !== 200) {
          createErrors++;
          await r?.arrayBuffer();
          continue;
        }
        const taskId = ((await r.json()) as { data?: { taskId?: string } }).data?.taskId;
        if (taskId) byPrompt.set(promptOf(i), taskId);
      }
    };
    await Promise.all(Array.from({ length: 32 }, client));
    const createSeconds = (Date.now() - t0) / 1000;
    const accepted = TASKS - createErrors;
    // Every task handed to the upstream (none waiting).
    let handedAt = 0;
    for (const end = Date.now() + 300_000; Date.now() < end; await sleep(200)) {
      const s = await counter.byState();
      if ((s.waiting ?? 0) === 0 && (s.queuing ?? 0) + (s.generating ?? 0) >= accepted) {
        handedAt = Date.now();
        break;
      }
    }
    const handedSeconds = handedAt ? (handedAt - t0) / 1000 : NaN;

    // The window: everything in flight, nothing completes until it ends; then the jobs complete over JOB_MS.
    await fetch(`${fake.url}/go?holdMs=${HOLD_MS}&spreadMs=${JOB_MS}`, { method: 'POST' });
    const windowEnd = Date.now() + HOLD_MS;
    await sleep(SETTLE_MS);
    const statsOf = async () => (await fetch(`${fake.url}/stats`)).json() as Promise<{ recordInfos: number; jobs: Array<[string, number | null, number]> }>;
    const tx0 = await metric(server.url, 'gengate_database_write_transactions_total');
    const rows0 = database === 'sqlite' ? await metric(server.url, 'gengate_database_rows_written_total') : 0;
    const pg0 = await counter.pgStats();
    const polls0 = (await statsOf()).recordInfos;
    const cpu0 = cpuMs(pid) ?? 0;
    const w0 = Date.now();
    let rssInFlightMb = rssMb(pid);
    while (Date.now() < windowEnd - 1_500) {
      await sleep(500);
      rssInFlightMb = Math.max(rssInFlightMb, rssMb(pid));
    }
    const cpu1 = cpuMs(pid) ?? 0;
    const w1 = Date.now();
    const polls1 = (await statsOf()).recordInfos;
    const pg1 = await counter.pgStats();
    const tx1 = await metric(server.url, 'gengate_database_write_transactions_total');
    const rows1 = database === 'sqlite' ? await metric(server.url, 'gengate_database_rows_written_total') : 0;
    const s = await counter.byState();
    const inFlight = (s.waiting ?? 0) + (s.queuing ?? 0) + (s.generating ?? 0);
    const seconds = (w1 - w0) / 1000;
    const polls = polls1 - polls0;
    const rows = pg0 && pg1 ? pg1.rows - pg0.rows : rows1 - rows0;

    // Then every task final and every callback received (limit: 5 minutes after the last job's completion).
    const deadline = windowEnd + JOB_MS + 300_000;
    let final = 0;
    let success = 0;
    for (; Date.now() < deadline; await sleep(250)) {
      const st = await counter.byState();
      final = (st.success ?? 0) + (st.fail ?? 0);
      success = st.success ?? 0;
      if (final >= accepted && arrived.size >= accepted) break;
    }
    const stats = await statsOf();
    const noticed: number[] = [];
    const polled: number[] = [];
    for (const [prompt, doneAt, notify] of stats.jobs) {
      const taskId = byPrompt.get(prompt);
      const at = taskId === undefined ? undefined : arrived.get(taskId);
      if (doneAt === null || at === undefined) continue;
      (notify ? noticed : polled).push(at - doneAt);
    }
    if (process.env.BENCH_INFLIGHT_DUMP) {
      // Each job's completion time and its callback's latency, for finding what makes the tail.
      const rowsOut = stats.jobs.map(([prompt, doneAt, notify]) => [
        doneAt,
        notify,
        doneAt === null ? null : (arrived.get(byPrompt.get(prompt) ?? '') ?? 0) - doneAt,
      ]);
      writeFileSync(`${process.env.BENCH_INFLIGHT_DUMP}-${database}-${learnt}.json`, JSON.stringify(rowsOut));
    }
    const kb = inFlight ? Math.round(((Math.max(0, rssInFlightMb - rssBeforeMb) * 1024) / inFlight) * 10) / 10 : 0;
    const run: InflightRun = {
      database,
      learnt,
      tasks: TASKS,
      createErrors,
      createSeconds: Math.round(createSeconds * 10) / 10,
      handedSeconds: Math.round(handedSeconds * 10) / 10,
      final,
      success,
      lost: accepted - final,
      callbacksReceived: arrived.size,
      window: {
        seconds: Math.round(seconds * 10) / 10,
        inFlight,
        polls,
        pollsPerSec: Math.round(polls / seconds),
        cpuMs: cpu1 - cpu0,
        cpuMsPerTaskMinute: inFlight ? Math.round(((cpu1 - cpu0) / inFlight / (seconds / 60)) * 1000) / 1000 : 0,
        writeTx: tx1 - tx0,
        writeTxPerTaskMinute: inFlight ? Math.round(((tx1 - tx0) / inFlight / (seconds / 60)) * 10_000) / 10_000 : 0,
        writeTxPerPoll: polls ? Math.round(((tx1 - tx0) / polls) * 1000) / 1000 : 0,
        rowsPerPoll: polls ? Math.round((rows / polls) * 1000) / 1000 : 0,
        ...(pg0 && pg1 && polls ? { pgCommitsPerPoll: Math.round(((pg1.commits - pg0.commits) / polls) * 1000) / 1000 } : {}),
      },
      rssBeforeMb: Math.round(rssBeforeMb),
      rssInFlightMb: Math.round(rssInFlightMb),
      kbPerInFlightTask: kb,
      webhook: latency(noticed),
      polling: latency(polled),
      pass: false,
    };
    run.pass = run.lost === 0 && run.createErrors === 0 && run.callbacksReceived === accepted;
    return run;
  } finally {
    await counter?.close().catch(() => {});
    await Promise.all(started.map((p) => stopProcess(p.child)));
    receiver.closeAllConnections();
    receiver.close();
    await pgDb?.drop().catch(() => {});
    if (!process.env.BENCH_KEEP) rmSync(dir, { recursive: true, force: true });
    else console.log(`kept ${dir}`);
  }
}

/**
 * The section: the runs of BENCH_INFLIGHT_RUNS (`<sqlite|postgres>:<notices|polling>`, comma-separated;
 * default notices on SQLite and PostgreSQL, then polling on SQLite); PostgreSQL runs need
 * BENCH_DATABASE_URL or TEST_DATABASE_URL.
 */
export async function benchInflight(): Promise<InflightRun[]> {
  const pgBase = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
  const wanted = (process.env.BENCH_INFLIGHT_RUNS ?? 'sqlite:notices,postgres:notices,sqlite:polling').split(',').map((r) => r.trim());
  const runs: InflightRun[] = [];
  for (const spec of wanted) {
    const [database, learnt] = spec.split(':');
    if ((database !== 'sqlite' && database !== 'postgres') || (learnt !== 'notices' && learnt !== 'polling')) {
      throw new Error(`BENCH_INFLIGHT_RUNS: ${spec} is not <sqlite|postgres>:<notices|polling>`);
    }
    if (database === 'postgres' && !pgBase) {
      console.log(`\n*** NOTICE: BENCH_DATABASE_URL / TEST_DATABASE_URL not set: the in-flight run ${spec} is skipped ***\n`);
      continue;
    }
    runs.push(await runOnce(database, learnt, database === 'postgres' ? pgBase : undefined));
  }
  return runs;
}

const mark = (ok: boolean) => (ok ? 'PASS' : 'FAIL');

export function printInflight(runs: InflightRun[]): void {
  for (const r of runs) {
    const w = r.window;
    console.log(
      `in flight (${r.database}, ${r.learnt}, ${ROUTE} route, jobs of ${JOB_MS / 1000} s or more): ${r.tasks} tasks created in ${r.createSeconds} s (${r.createErrors} refused), ` +
        `all handed after ${r.handedSeconds} s; final ${r.final} (${r.success} success), lost ${r.lost}, callbacks ${r.callbacksReceived}`,
      mark(r.pass),
    );
    // A notices run may see no poll in the window (the safety net comes every UPSTREAM_FALLBACK_POLL_MS): then its writes are the lease renewals, per task.
    const writes = w.polls
      ? `database writes per poll: ${w.writeTxPerPoll} transactions, ${w.rowsPerPoll} rows${w.pgCommitsPerPoll !== undefined ? `, ${w.pgCommitsPerPoll} commits (reads included)` : ''}`
      : `no poll in the window; ${w.writeTx} write transactions (lease renewals, one per 1,000 held tasks, and the loops' claims)`;
    console.log(
      `  window ${w.seconds} s with ${w.inFlight} in flight: ${w.polls} upstream polls (${w.pollsPerSec}/s); worker CPU ${w.cpuMsPerTaskMinute} ms per in-flight task per minute; ${writes}`,
      mark(w.writeTxPerPoll < 0.1 && w.writeTxPerTaskMinute < 0.1),
    );
    console.log(
      `  memory: ${r.rssBeforeMb} → ${r.rssInFlightMb} MB, ${r.kbPerInFlightTask} KB per in-flight task (goal ≤ ${GOAL_KB})`,
      mark(r.kbPerInFlightTask <= GOAL_KB),
    );
    if (r.learnt === 'notices') {
      console.log(
        `  completion to client callback: with the upstream's notice p50 ${r.webhook.p50Ms} ms, p99 ${r.webhook.p99Ms} ms (n ${r.webhook.n}, goal p99 ≤ ${GOAL_P99_MS})`,
        mark(r.webhook.n > 0 && r.webhook.p99Ms <= GOAL_P99_MS),
      );
      console.log(
        `  notices lost on the way, caught by the safety-net polls: p50 ${r.polling.p50Ms} ms, p99 ${r.polling.p99Ms} ms (n ${r.polling.n}; information)`,
      );
    } else {
      console.log(`  completion to client callback by polling: p50 ${r.polling.p50Ms} ms, p99 ${r.polling.p99Ms} ms (n ${r.polling.n}; information)`);
    }
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const runs = await benchInflight();
  printInflight(runs);
  console.log(JSON.stringify(runs, null, 2));
  process.exit(runs.every((r) => r.pass) ? 0 : 1);
}
