// Scale-out figures on PostgreSQL (issue 9): recordInfo of 1 and 2 API processes (ROLE=api) next
// to the bare server, and tasks/s per worker (ROLE=worker). Optional: needs BENCH_DATABASE_URL or
// TEST_DATABASE_URL. Runs alone with `npx tsx bench/scale.ts` (merging into latest.json) or from run.ts.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { measure, startProcess, stopProcess, type HttpResult } from './http.js';
import { loadConfig } from '../src/config.js';
import { buildServices } from '../src/services.js';

export interface ScaleResult {
  bare: HttpResult;
  oneApi: HttpResult & { ratio: number; minRatio: number; pass: boolean };
  twoApis: HttpResult & { ratio: number; scaling: number };
  workers: Array<{ workers: number; tasks: number; seconds: number; tasksPerSec: number; tasksPerSecPerWorker: number }>;
}

const BODY = JSON.stringify({ model: 'google/nano-banana', input: { prompt: 'scale bench: a lighthouse', aspect_ratio: '1:1' } });

/** A fresh PostgreSQL database next to the one `url` names; dropped by the returned function. */
export async function freshDatabase(url: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `gg_bench_${randomBytes(5).toString('hex')}`;
  const admin = async (q: string) => {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    await c.query(q);
    await c.end();
  };
  await admin(`create database ${name}`);
  const u = new URL(url);
  u.pathname = `/${name}`;
  return { url: u.toString(), drop: () => admin(`drop database if exists ${name} with (force)`) };
}

const sum = (rs: HttpResult[], name: string): HttpResult => ({
  name,
  reqPerSec: rs.reduce((s, r) => s + r.reqPerSec, 0),
  p99Ms: Math.max(...rs.map((r) => r.p99Ms)),
  non2xx: rs.reduce((s, r) => s + r.non2xx, 0),
  cpuUsPerReq: rs.every((r) => r.cpuUsPerReq !== undefined)
    ? Math.round(rs.reduce((s, r) => s + r.cpuUsPerReq! * r.reqPerSec, 0) / rs.reduce((s, r) => s + r.reqPerSec, 0))
    : undefined,
});
const mid = (rs: HttpResult[]) => [...rs].sort((a, b) => a.reqPerSec - b.reqPerSec)[Math.floor(rs.length / 2)]!;

/** Runs the scale section; null (with a notice) when no PostgreSQL URL is given. */
export async function benchScale(opts: { seconds: number; connections: number; rounds: number; tasks: number }): Promise<ScaleResult | null> {
  const base = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
  if (!base) {
    console.log('\n*** NOTICE: BENCH_DATABASE_URL / TEST_DATABASE_URL not set: the PostgreSQL scale section is SKIPPED ***\n');
    return null;
  }
  const database = await freshDatabase(base);
  const dir = mkdtempSync(path.join(tmpdir(), 'gengate-scale-bench-'));
  const env = (role: 'api' | 'worker' | 'all', i: number) => {
    const d = path.join(dir, `${role}-${i}`);
    mkdirSync(d, { recursive: true });
    return {
      DATA_DIR: d,
      DATABASE_URL: database.url,
      PORT: '0',
      ROLE: role,
      FIRST_RUN_ACCOUNT: 'false',
      // Every process has its own DATA_DIR: the key that seals stored secrets must be the same for all (decision 0314).
      GENGATE_SECRET_KEY: 'bench-scale-secret-key-0123456789abcdef',
      LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info',
      RATE_LIMIT_READ: '1000000000',
      RATE_LIMIT_WRITE: '1000000000',
      RATE_LIMIT_PUBLIC: '1000000000',
      LOCAL_QUEUE_MS: '0',
      LOCAL_GENERATE_MS: '0',
      ENGINE_POLL_MS: '50',
      MODERATION_IMAGES: 'off',
    };
  };
  const started: Array<Awaited<ReturnType<typeof startProcess>>> = [];
  const start = async (args: string[], e: Record<string, string>, log: string) => {
    const p = await startProcess(args, e, path.join(dir, log));
    started.push(p);
    return p;
  };
  try {
    // Migrations and the account from this process, once.
    const setup = await buildServices(loadConfig({ ...env('all', 0), LOG_LEVEL: 'silent' }));
    const { apiKey } = await setup.accounts.create('bench', 1_000_000 * 1_000_000);
    await setup.close();
    const headers = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
    const bare = await start(['bench/bare-server.ts'], {}, 'bare.log');
    const api1 = await start(['src/main.ts', 'serve'], env('api', 1), 'api-1.log');
    const created = await fetch(`${api1.url}/api/v1/jobs/createTask`, { method: 'POST', headers, body: BODY });
    const taskId = ((await created.json()) as { data: { taskId: string } }).data.taskId;
    const info = (url: string) => `${url}/api/v1/jobs/recordInfo?taskId=${taskId}`;
    const { seconds, connections } = opts;
    await measure('warm-up', `${bare.url}/`, { seconds: 1, connections });
    await measure('warm-up', info(api1.url), { seconds: 1, connections, headers });

    // One API process, alternating with the bare server.
    const bares: HttpResult[] = [];
    const ones: HttpResult[] = [];
    for (let i = 0; i < opts.rounds; i++) {
      bares.push(await measure('bare Fastify hello-world', `${bare.url}/`, { seconds, connections, pid: bare.child.pid }));
      ones.push(await measure('recordInfo, 1 API process (PostgreSQL)', info(api1.url), { seconds, connections, headers, pid: api1.child.pid }));
    }
    // Two API processes: the same connections split between them, measured at the same time.
    const api2 = await start(['src/main.ts', 'serve'], env('api', 2), 'api-2.log');
    await measure('warm-up', info(api2.url), { seconds: 1, connections, headers });
    const twos: HttpResult[] = [];
    for (let i = 0; i < opts.rounds; i++) {
      const half = Math.max(1, Math.floor(connections / 2));
      const pair = await Promise.all([api1, api2].map((p) => measure('part', info(p.url), { seconds, connections: half, headers, pid: p.child.pid })));
      twos.push(sum(pair, 'recordInfo, 2 API processes (PostgreSQL)'));
      bares.push(await measure('bare Fastify hello-world', `${bare.url}/`, { seconds, connections, pid: bare.child.pid }));
    }
    const b = mid(bares);
    const one = mid(ones);
    const two = mid(twos);
    const ratio = (r: HttpResult) => Math.round((r.reqPerSec / b.reqPerSec) * 1000) / 1000;
    const oneApi = { ...one, ratio: ratio(one), minRatio: 0.3, pass: ratio(one) >= 0.3 && one.non2xx === 0 };
    const twoApis = { ...two, ratio: ratio(two), scaling: Math.round((two.reqPerSec / one.reqPerSec) * 100) / 100 };

    // Workers: tasks made by the API process while no worker runs, then worked off by 1, then 2 workers.
    const workers: ScaleResult['workers'] = [];
    const pool = new pg.Pool({ connectionString: database.url, max: 2 });
    pool.on('error', () => {}); // dropping the database at the end ends its idle connections
    for (const count of [1, 2]) {
      const since = Date.now();
      let sent = 0;
      await Promise.all(
        Array.from({ length: 16 }, async () => {
          while (sent < opts.tasks) {
            sent++;
            await (await fetch(`${api1.url}/api/v1/jobs/createTask`, { method: 'POST', headers, body: BODY })).arrayBuffer();
          }
        }),
      );
      const ws = await Promise.all(
        Array.from({ length: count }, (_, i) => start(['src/main.ts', 'serve'], env('worker', count * 10 + i), `worker-${count}-${i}.log`)),
      );
      const end = Date.now() + 10 * 60_000;
      let open = 1;
      while (open > 0 && Date.now() < end) {
        await sleep(200);
        open = Number((await pool.query(`select count(*) as n from tasks where created_at >= $1 and state not in ('success', 'fail')`, [since])).rows[0].n);
      }
      // Completion stamps, not wall time: the workers' start-up does not count.
      const r = (await pool.query(`select count(*) as n, min(completed_at) as first, max(completed_at) as last from tasks where created_at >= $1`, [since]))
        .rows[0];
      const secs = Math.max(0.001, (Number(r.last) - Number(r.first)) / 1000);
      const perSec = Math.round(((Number(r.n) - 1) / secs) * 10) / 10;
      workers.push({
        workers: count,
        tasks: Number(r.n),
        seconds: Math.round(secs * 10) / 10,
        tasksPerSec: perSec,
        tasksPerSecPerWorker: Math.round((perSec / count) * 10) / 10,
      });
      await Promise.all(ws.map((w) => stopProcess(w.child)));
    }
    await pool.end();
    return { bare: b, oneApi, twoApis, workers };
  } finally {
    await Promise.all(started.map((p) => stopProcess(p.child)));
    await database.drop().catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The section's lines for the bench report. */
export function printScale(r: ScaleResult): void {
  console.log(`\nPostgreSQL scale-out (2 shared cores: the API processes, PostgreSQL and the load generator compete for them)`);
  console.log(`  bare Fastify hello-world: ${r.bare.reqPerSec} req/s`);
  console.log(
    `  ${r.oneApi.name}: ${r.oneApi.reqPerSec} req/s, p99 ${r.oneApi.p99Ms} ms, ${r.oneApi.cpuUsPerReq ?? '?'} µs CPU/req, ratio ${r.oneApi.ratio} (min ${r.oneApi.minRatio})`,
    r.oneApi.pass ? 'PASS' : 'FAIL',
  );
  console.log(`  ${r.twoApis.name}: ${r.twoApis.reqPerSec} req/s, p99 ${r.twoApis.p99Ms} ms, ratio ${r.twoApis.ratio}, ${r.twoApis.scaling}× one process`);
  for (const w of r.workers)
    console.log(`  ${w.workers} worker(s): ${w.tasks} tasks in ${w.seconds} s = ${w.tasksPerSec} tasks/s (${w.tasksPerSecPerWorker} per worker)`);
}

// Alone: print, and merge into bench/results/latest.json.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const r = await benchScale({
    seconds: Number(process.env.BENCH_SECONDS ?? 5),
    connections: Number(process.env.BENCH_CONNECTIONS ?? 20),
    rounds: Number(process.env.BENCH_ROUNDS ?? 3),
    tasks: Number(process.env.BENCH_SCALE_TASKS ?? 1000),
  });
  if (r) {
    printScale(r);
    const file = 'bench/results/latest.json';
    const prior = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>) : {};
    mkdirSync('bench/results', { recursive: true });
    writeFileSync(file, `${JSON.stringify({ ...prior, scale: { date: new Date().toISOString(), ...r } }, null, 2)}\n`);
    console.log(`written ${file}`);
  }
  process.exit(r && !r.oneApi.pass ? 1 : 0);
}
