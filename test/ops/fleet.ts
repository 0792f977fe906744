import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { expect } from 'vitest';
import type { Services } from '../../src/services.js';
import { GENGATE, SERVE_START_MS } from '../helpers/cli.js';
import { UNLIMITED } from '../helpers/server.js';
import { eventually, expectLedgerInvariant } from '../tasks/support.js';

/**
 * Real `gengate serve` processes for the rolling-restart and upgrade tests (decision 2602, 2601),
 * each started from a checkout (`cwd`: this one, or an older release built from git), and a load
 * that goes through them as a reverse proxy would.
 */
export interface Member {
  role: 'api' | 'worker';
  child: ChildProcess;
  url: string;
  output: () => string;
}

/** Starts `gengate serve --role` from the sources in `cwd` and waits for its listening line. */
export async function startMember(cwd: string, role: 'api' | 'worker', env: Record<string, string>): Promise<Member> {
  // This checkout runs from the run's compiled sources; an older release from its own, through tsx.
  const program = path.resolve(cwd) === process.cwd() ? GENGATE : ['--import', 'tsx', 'src/main.ts'];
  const child = spawn(process.execPath, [...program, 'serve', '--role', role], {
    cwd,
    env: { ...process.env, LOG_LEVEL: 'warn', PORT: '0', ...UNLIMITED, ...env },
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start:\n${out}`)), SERVE_START_MS);
    child.stdout!.on('data', () => {
      const m = /listening on (http:\/\/[^\s]+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    child.on('exit', (code) => reject(new Error(`serve exited with ${code}:\n${out}`)));
  });
  return { role, child, url, output: () => out };
}

/** Stops a member with `signal` and resolves with its exit code (null when a signal ended it). */
export function stopMember(m: Member, signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
  return new Promise((resolve) => {
    if (m.child.exitCode !== null || m.child.signalCode !== null) return resolve(m.child.exitCode);
    m.child.once('exit', (code) => resolve(code));
    m.child.kill(signal);
  });
}

/** What the load saw: every answer's status, the tasks accepted, and how often a request went to another process. */
export interface LoadReport {
  statuses: number[];
  accepted: Map<string, string>;
  retried: number;
}

/**
 * createTask from each key in turn, spread over the API processes in `apis` (which the test changes
 * as it restarts them), each with its own Idempotency-Key. Like a reverse proxy (nginx's
 * `proxy_next_upstream error`), a request whose connection failed (refused by a stopped process,
 * closed under an idle keep-alive connection) goes to the next process, with the same key, so it is
 * never created twice. Every HTTP answer is recorded.
 */
export function startLoad(apis: string[], keys: string[], callBackUrl: string, prompt = (n: number) => (n % 5 === 4 ? 'roll gengate:fail=501' : 'roll')) {
  const report: LoadReport = { statuses: [], accepted: new Map(), retried: 0 };
  let running = true;
  let turn = 0;
  const send = async (key: string, idem: string, body: string): Promise<void> => {
    for (let tries = 0; ; tries++) {
      const api = apis[turn++ % apis.length]!;
      try {
        const res = await fetch(`${api}/api/v1/jobs/createTask`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': idem },
          body,
        });
        const json = (await res.json()) as { data?: { taskId?: string } };
        report.statuses.push(res.status);
        if (res.status === 200) report.accepted.set(idem, json.data!.taskId!);
        return;
      } catch (e) {
        if (tries >= 50) throw e;
        report.retried++;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }
  };
  // A loop that gives up (every process refused 50 times) stops; `stop` reports it.
  const loops = keys.map(async (key, k) => {
    for (let n = 0; running; n++) {
      const input = { prompt: prompt(n), seed: 5, output_format: 'jpeg' };
      await send(key, `k${k}-n${n}`, JSON.stringify({ model: 'seedream-flash', input, callBackUrl: `${callBackUrl}/cb/k${k}-n${n}` }));
      // Paced, so the run makes hundreds of tasks rather than thousands on a fast machine.
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  });
  for (const loop of loops) loop.catch(() => {}); // reported by stop()
  return {
    report,
    /** Ends the loops after their requests in flight; rejects with the first loop that gave up. */
    stop: async () => {
      running = false;
      await Promise.all(loops);
      return report;
    },
  };
}

/**
 * Nothing lost, nothing twice: every accepted task ends (success or fail), each charged exactly
 * once and refunded at most once (only a failed one), every balance equal to its ledger, and every
 * task's callback delivered.
 */
export async function expectNothingLost(services: Services, accepted: Map<string, string>, limitMs = 60_000): Promise<void> {
  const ids = [...accepted.values()];
  const { db } = services.database;
  await eventually(
    async () => {
      const open = await db.selectFrom('tasks').select('id').where('id', 'in', ids).where('state', 'not in', ['success', 'fail']).execute();
      return open.length === 0;
    },
    limitMs,
    'every accepted task final',
  );
  expect(new Set(ids).size).toBe(ids.length); // one task per idempotency key
  const tasks = await db.selectFrom('tasks').select(['id', 'state']).where('id', 'in', ids).execute();
  expect(tasks).toHaveLength(ids.length);
  const entries = await db.selectFrom('ledger_entries').select(['task_id', 'kind']).where('task_id', 'in', ids).execute();
  const count = (id: string, kind: string) => entries.filter((e) => e.task_id === id && e.kind === kind).length;
  for (const t of tasks) {
    expect(count(t.id, 'charge'), t.id).toBe(1);
    expect(count(t.id, 'refund'), t.id).toBe(t.state === 'fail' ? 1 : 0);
  }
  await expectLedgerInvariant(services.database);
  await eventually(
    async () => (await db.selectFrom('callbacks').select('task_id').where('task_id', 'in', ids).where('status', '!=', 'delivered').execute()).length === 0,
    limitMs,
    'every callback delivered',
  );
}
