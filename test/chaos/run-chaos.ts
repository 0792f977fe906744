import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { sql } from 'kysely';
import { loadConfig } from '../../src/config.js';
import { buildServices } from '../../src/services.js';
import { spawnServe, stop } from '../helpers/cli.js';
import { countFindings, findProblems, type Findings } from './checks.js';
import { seeded, startChaosReceiver } from './receiver.js';

/** How big and how rough a chaos run is. */
export interface ChaosOptions {
  /** A PostgreSQL database of its own (it is migrated and filled), and a Redis. */
  databaseUrl: string;
  redisUrl: string;
  tasks: number;
  apis: number;
  workers: number;
  /** SIGKILLs spread over the load, each of a random API or worker process, restarted after. */
  kills: number;
  seed: number;
  /** How long the tasks and callbacks may take to settle after the load. */
  drainMs: number;
  log: (line: string) => void;
  /**
   * Fixed ports (npm run chaos, CHAOS_PORT_BASE): API process i listens on base + i, worker j on
   * base + apis + j (a restarted process takes its old port), the callback receiver on
   * base + apis + workers. Without it every port is a free one the system picks (the test).
   */
  portBase?: number;
}

/** What a chaos run did and found. */
export interface ChaosReport {
  accepted: number;
  refusedForBalance: number;
  clientGaveUp: number;
  killed: { api: number; worker: number };
  seconds: number;
  findings: Findings;
  problems: number;
}

/** The key every process of the run seals webhook secrets with (they share one database). */
export const CHAOS_SECRET_KEY = 'chaos-secret-key-0123456789abcdef';
const CALLBACK_TIMEOUT_MS = 2_000;
const ACCOUNTS = 12;
const RICH_MICROS = 50_000_000;
const POOR_MICROS = 400_000; // a few tasks, then 402s while refunds trickle in

/** A process of the run: its role, child and (for an API process) its URL. */
interface Proc {
  role: 'api' | 'worker';
  child: ChildProcess;
  url: string;
  /** Its place among the processes: its port when the ports are fixed. */
  slot: number;
}

/**
 * DECISIONS §17 under fire (issue 17): API and worker processes over one PostgreSQL and Redis, a
 * load of createTask calls (some to fail after generating or at hand-off, every tenth sent twice at
 * once to two API processes under one Idempotency-Key), callbacks to a receiver that fails and
 * answers slowly, and random SIGKILLs of API and worker processes. A client whose request dies
 * retries with the same key at another API process, as a careful client does. After the drain the
 * database is checked for lost tasks, double charges, wrong refunds, balance ≠ ledger and
 * callbacks never delivered or delivered under two ids.
 */
export async function runChaos(o: ChaosOptions): Promise<ChaosReport> {
  const started = Date.now();
  const random = seeded(o.seed);
  const dataDir = mkdtempSync(path.join(tmpdir(), 'gengate-chaos-'));
  const port = (slot: number) => (o.portBase === undefined ? 0 : o.portBase + slot);
  const receiver = await startChaosReceiver(random, CALLBACK_TIMEOUT_MS + 500, port(o.apis + o.workers));
  const env: Record<string, string> = {
    DATABASE_URL: o.databaseUrl,
    REDIS_URL: o.redisUrl,
    DATA_DIR: dataDir,
    FIRST_RUN_ACCOUNT: 'false',
    GENGATE_SECRET_KEY: CHAOS_SECRET_KEY,
    LOG_LEVEL: 'error',
    LOCAL_QUEUE_MS: '20',
    LOCAL_GENERATE_MS: '80',
    ENGINE_POLL_MS: '200',
    ENGINE_LEASE_MS: '2000',
    ENGINE_RETRY_MS: '50',
    ENGINE_CONCURRENCY: '16',
    CALLBACK_RETRY_DELAYS_MS: '100,300,600,1000,2000,4000,8000',
    CALLBACK_TIMEOUT_MS: String(CALLBACK_TIMEOUT_MS),
    ALLOW_PRIVATE_NETWORK: 'true',
    MODERATION_IMAGES: 'off',
    RATE_LIMIT_WRITE: '1000000',
    RATE_LIMIT_READ: '1000000',
    RATE_LIMIT_PUBLIC: '1000000',
  };
  const services = await buildServices(loadConfig(env));
  const procs: Proc[] = [];
  const start = async (role: Proc['role'], slot: number) => {
    const p = await spawnServe({ ...env, PORT: String(port(slot)) }, ['--role', role]);
    procs.push({ role, child: p.child, url: p.url, slot });
  };
  try {
    const keys: string[] = [];
    for (let a = 0; a < ACCOUNTS; a++) keys.push((await services.accounts.create(`chaos-${a}`, a % 4 === 3 ? POOR_MICROS : RICH_MICROS)).apiKey);
    await Promise.all([
      ...Array.from({ length: o.apis }, (_, i) => start('api', i)),
      ...Array.from({ length: o.workers }, (_, j) => start('worker', o.apis + j)),
    ]);
    o.log(`chaos: ${o.apis} API and ${o.workers} worker processes up; ${o.tasks} tasks, ${o.kills} kills, seed ${o.seed}`);

    const given = new Map<string, string>(); // taskId -> Idempotency-Key
    let refused = 0;
    let gaveUp = 0;
    const killed = { api: 0, worker: 0 };
    const apiUrl = (i: number) => {
      const apis = procs.filter((p) => p.role === 'api');
      // While the only API process is being restarted there is none: the request fails and is retried.
      return apis.length ? apis[i % apis.length]!.url : 'http://127.0.0.1:1';
    };
    // One request with retries: network errors and 5xx are retried with the same key at the next API process.
    const send = async (i: number, key: string, apiKey: string, body: unknown) => {
      for (let attempt = 0; attempt < 10; attempt++) {
        try {
          const res = await fetch(`${apiUrl(i + attempt)}/api/v1/jobs/createTask`, {
            method: 'POST',
            headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', 'idempotency-key': key },
            body: JSON.stringify(body),
            signal: AbortSignal.timeout(10_000),
          });
          const answer = (await res.json()) as { data?: { taskId?: string } };
          if (res.status === 200 && answer.data?.taskId) return given.set(answer.data.taskId, key);
          if (res.status === 402) return refused++;
          if (res.status < 500) throw new Error(`createTask answered ${res.status}: ${JSON.stringify(answer)}`);
        } catch (e) {
          if (e instanceof Error && e.message.startsWith('createTask answered')) throw e;
        }
        await new Promise((r) => setTimeout(r, 100 * (attempt + 1)));
      }
      gaveUp++;
    };

    // Kills spread over the load: a random process dies with SIGKILL and a new one of its role starts.
    const killEvery = Math.max(1, Math.floor(o.tasks / (o.kills + 1)));
    let kills = 0;
    let killing: Promise<void> = Promise.resolve();
    const killOne = async () => {
      const victim = procs[Math.floor(random() * procs.length)]!;
      procs.splice(procs.indexOf(victim), 1);
      killed[victim.role]++;
      await stop(victim.child, 'SIGKILL');
      await start(victim.role, victim.slot);
    };
    let next = 0;
    let sent = 0;
    await Promise.all(
      Array.from({ length: 24 }, async () => {
        while (next < o.tasks) {
          const i = next++;
          const a = i % ACCOUNTS;
          const n = Math.floor(i / ACCOUNTS);
          const fails = n % 10 === 3 ? ' gengate:fail=501' : n % 20 === 7 ? ' gengate:fail=400' : '';
          const body = {
            model: n % 5 === 4 ? 'nano-banana-2' : 'seedream-flash',
            input: { prompt: `chaos${fails}`, seed: 7, output_format: 'jpeg', ...(n % 5 === 4 ? { resolution: '1K' } : {}) },
            callBackUrl: `${receiver.url}/cb/${a}/${n}`,
          };
          const key = `chaos-${a}-${n}`;
          const twice = n % 10 === 0;
          await Promise.all([send(i, key, keys[a]!, body), ...(twice ? [send(i + 1, key, keys[a]!, body)] : [])]);
          sent++;
          // One kill at a time, so at least one API process of several is always up.
          if (sent % killEvery === 0 && kills < o.kills) {
            kills++;
            killing = killing.then(killOne);
          }
        }
      }),
    );
    await killing;
    o.log(
      `chaos: load sent in ${((Date.now() - started) / 1000).toFixed(1)} s: ${given.size} tasks, ${refused} refused for the balance, ${gaveUp} given up; killed ${killed.api} API and ${killed.worker} worker processes`,
    );

    // Drain: every task final, then every callback settled (delivered or out of retries).
    const q = services.database.db;
    const n = async (query: { executeTakeFirstOrThrow(): Promise<{ n: number | string }> }) => Number((await query.executeTakeFirstOrThrow()).n);
    const openTasks = () =>
      n(
        q
          .selectFrom('tasks')
          .select(sql<number>`count(*)`.as('n'))
          .where('state', 'in', ['waiting', 'queuing', 'generating']),
      );
    const pendingCallbacks = () =>
      n(
        q
          .selectFrom('callbacks')
          .select(sql<number>`count(*)`.as('n'))
          .where('status', '=', 'pending'),
      );
    const end = Date.now() + o.drainMs;
    while (Date.now() < end && (await openTasks()) > 0) await new Promise((r) => setTimeout(r, 250));
    while (Date.now() < end && (await pendingCallbacks()) > 0) await new Promise((r) => setTimeout(r, 250));

    const findings = await findProblems(q, given, receiver.deliveries);
    return {
      accepted: given.size,
      refusedForBalance: refused,
      clientGaveUp: gaveUp,
      killed,
      seconds: (Date.now() - started) / 1000,
      findings,
      problems: countFindings(findings),
    };
  } finally {
    await Promise.all(procs.map((p) => stop(p.child, 'SIGKILL')));
    await services.close();
    await receiver.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** The report as lines of text: the figures, then each kind of finding with up to 10 examples. */
export function formatReport(r: ChaosReport): string {
  const lines = [
    `tasks accepted ${r.accepted}, refused for the balance ${r.refusedForBalance}, client gave up ${r.clientGaveUp}`,
    `killed: ${r.killed.api} API, ${r.killed.worker} worker processes; ${r.seconds.toFixed(1)} s`,
  ];
  for (const [kind, list] of Object.entries(r.findings) as Array<[string, string[]]>) {
    lines.push(`${kind}: ${list.length}`);
    for (const item of list.slice(0, 10)) lines.push(`  ${item}`);
  }
  lines.push(r.problems === 0 ? 'chaos: every promise held' : `chaos: ${r.problems} problems`);
  return lines.join('\n');
}
