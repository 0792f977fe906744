import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { readFileSync } from 'node:fs';
import { rssMb, startProcess, stopProcess } from './http.js';
import { openConnection } from '../src/store/index.js';

const BODY = JSON.stringify({ model: 'google/nano-banana', input: { prompt: 'burst: a lighthouse at dawn', aspect_ratio: '16:9' } });

/** Tops up the first account of the database under `dataDir` by `usd` through the real CLI. */
export async function topUp(dataDir: string, usd: number): Promise<void> {
  const env = { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'silent' };
  const cli = (args: string[]) => execFileSync(process.execPath, ['--import', 'tsx', 'src/main.ts', ...args], { env, encoding: 'utf8' });
  const { accounts } = JSON.parse(cli(['account', 'list', '--json'])) as { accounts: Array<{ id: string }> };
  cli(['account', 'topup', accounts[0]!.id, '--amount', String(usd), '--note', 'bench', '--json']);
}

/** Waits (at most 5 minutes) until no task in the database under `dataDir` is waiting, queuing or generating. */
export async function drain(dataDir: string): Promise<void> {
  const db = openConnection(path.join(dataDir, 'gengate.db'), { readonly: true });
  try {
    const active = db.prepare("select count(*) as n from tasks where state in ('waiting', 'queuing', 'generating')");
    for (const end = Date.now() + 300_000; Date.now() < end; await sleep(250)) {
      if (active.value() === 0) return;
    }
    throw new Error('bench: the engine did not work off the created tasks within 5 minutes');
  } finally {
    db.close();
  }
}

export interface BurstResult {
  tasks: number;
  createErrors: number;
  final: number;
  success: number;
  lost: number;
  seconds: number;
  tasksPerSec: number;
  peakInFlight: number;
  memoryGrowthMb: number;
  kbPerInFlightTask: number;
}

/**
 * Creates `n` tasks as fast as 32 clients can against a fresh server whose local backend answers
 * at once, and waits until every task is final: tasks/s, peak in-flight count and the server's
 * memory growth per in-flight task. A task not final within 10 minutes counts as lost.
 */
export async function benchBurst(n: number): Promise<BurstResult> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'gengate-burst-'));
  const env = {
    DATA_DIR: dataDir,
    PORT: '0',
    LOG_LEVEL: 'warn',
    LOCAL_QUEUE_MS: '0',
    LOCAL_GENERATE_MS: '0',
    ENGINE_POLL_MS: '50',
    RATE_LIMIT_WRITE: '1000000000',
    RATE_LIMIT_READ: '1000000000',
  };
  const server = await startProcess(['src/main.ts', 'serve'], env, path.join(dataDir, 'server.log'));
  try {
    const key = readFileSync(path.join(dataDir, 'first-api-key.txt'), 'utf8').trim();
    await topUp(dataDir, 1_000_000);
    const db = openConnection(path.join(dataDir, 'gengate.db'), { readonly: true });
    const counts = () => {
      const rows = db.prepare('select state, count(*) as n from tasks group by state').all() as Array<{ state: string; n: number }>;
      const by = Object.fromEntries(rows.map((r) => [r.state, r.n]));
      return { total: rows.reduce((s, r) => s + r.n, 0), success: by.success ?? 0, final: (by.success ?? 0) + (by.fail ?? 0) };
    };
    const baseMb = rssMb(server.child.pid!);
    let peakMb = baseMb;
    let peakInFlight = 0;
    let sent = 0;
    let createErrors = 0;
    const started = Date.now();
    const client = async () => {
      while (sent < n) {
        sent++;
        const r = await fetch(`${server.url}/api/v1/jobs/createTask`, {
          method: 'POST',
          body: BODY,
          headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
        }).catch(() => null);
        if (!r || r.status !== 200) createErrors++;
        await r?.arrayBuffer();
      }
    };
    const creating = Promise.all(Array.from({ length: 32 }, client));
    let c = counts();
    const deadline = started + 10 * 60_000;
    for (let done = false; !done && Date.now() < deadline;) {
      await sleep(200);
      c = counts();
      peakInFlight = Math.max(peakInFlight, c.total - c.final);
      peakMb = Math.max(peakMb, rssMb(server.child.pid!));
      done = sent >= n && c.total >= n - createErrors && c.final >= c.total;
    }
    await creating;
    const seconds = (Date.now() - started) / 1000;
    db.close();
    const growth = Math.max(0, peakMb - baseMb);
    return {
      tasks: n,
      createErrors,
      final: c.final,
      success: c.success,
      lost: n - createErrors - c.final,
      seconds: Math.round(seconds * 10) / 10,
      tasksPerSec: Math.round((c.final / seconds) * 10) / 10,
      peakInFlight,
      memoryGrowthMb: Math.round(growth),
      kbPerInFlightTask: peakInFlight ? Math.round((growth * 1024) / peakInFlight) : 0,
    };
  } finally {
    await stopProcess(server.child);
    rmSync(dataDir, { recursive: true, force: true });
  }
}
