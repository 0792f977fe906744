// Issue 17, item 1: the content check under attack. `npx tsx bench/moderation.ts` runs it alone;
// `npm run bench` runs it with the rest. Every figure has its baseline measured in the same run.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import sharp from 'sharp';
import { ClassifierPool, modelPixels } from '../src/moderation/index.js';
import { measure, settle, startProcess, stopProcess, type HttpResult } from './http.js';

/**
 * The issue's goals: one photo's check ≤ 250 ms where it took about 1 s, i.e. at least 4× the old
 * pure-JS backend measured in the same run (the absolute figure is printed too); the other tenant's
 * balance p99 under 50 ms during the attack.
 */
const PHOTO_GOAL_MS = 250;
const PHOTO_MIN_SPEEDUP = 4;
const BALANCE_P99_GOAL_MS = 50;

/** A photo with detail in it (noise decodes and resizes like a real one, unlike a flat colour). */
async function photo(): Promise<Buffer> {
  const side = 768;
  const noise = Buffer.alloc(side * side * 3);
  for (let i = 0; i < noise.length; i++) noise[i] = (i * 2654435761) >>> 24;
  return sharp(noise, { raw: { width: side, height: side, channels: 3 } })
    .jpeg({ quality: 85 })
    .toBuffer();
}

export interface ClassifierBench {
  name: string;
  /** Median milliseconds per photo in the worker: the old pure-JavaScript backend, and the one used now. */
  cpuMs: number;
  wasmMs: number;
  speedup: number;
  pass: boolean;
}

/** One photo's check (decode + model) in a one-worker pool, per backend: median of 7 photos after a warm-up one. */
export async function benchClassifier(): Promise<ClassifierBench> {
  const bytes = await photo();
  const perPhoto = async (backend: 'cpu' | 'wasm') => {
    const pool = new ClassifierPool({ workers: 1, checksPerAccount: 1, queueMax: 1, backend });
    try {
      await pool.score(await modelPixels(bytes), 'bench');
      const runs: number[] = [];
      for (let i = 0; i < 7; i++) {
        const t = performance.now();
        await pool.score(await modelPixels(bytes), 'bench');
        runs.push(performance.now() - t);
      }
      return runs.sort((a, b) => a - b)[3]!;
    } finally {
      await pool.close();
    }
  };
  const cpuMs = Math.round(await perPhoto('cpu'));
  const wasmMs = Math.round(await perPhoto('wasm'));
  return {
    name: 'content check, one photo (decode + model)',
    cpuMs,
    wasmMs,
    speedup: Math.round((cpuMs / wasmMs) * 10) / 10,
    pass: cpuMs / wasmMs >= PHOTO_MIN_SPEEDUP,
  };
}

export interface AttackPhase {
  name: string;
  /** The other tenant's balance requests during the phase. */
  balance: HttpResult;
  /** The attacker's answers by HTTP status. */
  attacker: Record<string, number>;
}

export interface AttackBench {
  phases: AttackPhase[];
  pass: boolean;
}

/**
 * A tenant reads its balance while an attacker sends bursts of 20 createTask requests with 14 photos
 * each and nsfw_check: first with no money (each must get its 402 unchecked), then with money (the
 * photos really are classified). The quiet phase before is the baseline.
 */
export async function benchModerationAttack(opts: { seconds: number }): Promise<AttackBench> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'gengate-moderation-'));
  const env = {
    DATA_DIR: dataDir,
    PORT: '0',
    LOG_LEVEL: 'warn',
    RATE_LIMIT_READ: '1000000000',
    RATE_LIMIT_WRITE: '1000000000',
    RATE_LIMIT_PUBLIC: '1000000000',
    LOCAL_QUEUE_MS: '0',
    LOCAL_GENERATE_MS: '0',
  };
  const server = await startProcess(['src/main.ts', 'serve'], env, path.join(dataDir, 'server.log'));
  try {
    const cli = (args: string[]) =>
      JSON.parse(
        execFileSync(process.execPath, ['--import', 'tsx', 'src/main.ts', '--new-database', ...args, '--json'], {
          env: { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'silent' },
          encoding: 'utf8',
        }),
      );
    const tenantKey = readFileSync(path.join(dataDir, 'first-api-key.txt'), 'utf8').trim();
    const broke = cli(['account', 'create', '--name', 'attacker-broke']) as { apiKey: string };
    const funded = cli(['account', 'create', '--name', 'attacker-funded', '--balance', '100000']) as { apiKey: string };
    const photoFile = path.join(dataDir, 'photo.jpg');
    writeFileSync(photoFile, await photo());
    const linkFor = async (key: string) => {
      const form = new FormData();
      form.append('file', new Blob([readFileSync(photoFile)]), 'photo.jpg');
      const r = await fetch(`${server.url}/api/v1/files/upload`, { method: 'POST', body: form, headers: { authorization: `Bearer ${key}` } });
      return ((await r.json()) as { data: { url: string } }).data.url;
    };
    const balance = (name: string) =>
      measure(name, `${server.url}/api/v1/user/balance`, {
        headers: { authorization: `Bearer ${tenantKey}` },
        seconds: opts.seconds,
        connections: 4,
        pid: server.child.pid,
      });
    const attack = async (key: string, name: string): Promise<AttackPhase> => {
      const link = await linkFor(key);
      const body = JSON.stringify({
        model: 'nano-banana-2',
        input: { prompt: 'a harbour at dusk', image_input: Array.from({ length: 14 }, () => link), nsfw_check: true },
      });
      const statuses: Record<string, number> = {};
      let on = true;
      // The issue's attack: 20 requests at once, again at the start of every second (the rate limits
      // are set out of reach, so that the content check, not the limiter, is what is measured).
      const client = async () => {
        while (on) {
          const r = await fetch(`${server.url}/api/v1/jobs/createTask`, {
            method: 'POST',
            body,
            headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
          }).catch(() => null);
          const status = String(r?.status ?? 'error');
          statuses[status] = (statuses[status] ?? 0) + 1;
          await r?.arrayBuffer();
          await sleep(1000 - (Date.now() % 1000));
        }
      };
      const clients = Array.from({ length: 20 }, client);
      const measured = await balance(name);
      on = false;
      await Promise.all(clients);
      await settle(server.child.pid);
      return { name, balance: measured, attacker: statuses };
    };
    await measure('warm-up', `${server.url}/api/v1/user/balance`, { headers: { authorization: `Bearer ${tenantKey}` }, seconds: 1, connections: 4 });
    const phases = [
      { name: 'balance, no attack (baseline)', balance: await balance('balance, no attack (baseline)'), attacker: {} },
      await attack(broke.apiKey, 'balance during the attack, 0 USD key'),
      await attack(funded.apiKey, 'balance during the attack, funded key'),
    ];
    const pass = phases.every((p) => p.balance.p99Ms < BALANCE_P99_GOAL_MS && p.balance.non2xx === 0);
    return { phases, pass };
  } finally {
    await stopProcess(server.child);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Prints both benches' figures. */
export function printModeration(classifier: ClassifierBench, attack: AttackBench): void {
  console.log(
    `${classifier.name}: ${classifier.wasmMs} ms (WASM backend, now) vs ${classifier.cpuMs} ms (pure-JS CPU backend, before), ${classifier.speedup}× (goal ≤ ${PHOTO_GOAL_MS} ms where it took ~1 s: at least ${PHOTO_MIN_SPEEDUP}×)`,
    classifier.pass ? 'PASS' : 'FAIL',
  );
  const base = attack.phases[0]!.balance;
  for (const p of attack.phases) {
    const ratio = Math.round((p.balance.reqPerSec / base.reqPerSec) * 100) / 100;
    const answers = Object.entries(p.attacker)
      .map(([status, n]) => `${n}×${status}`)
      .join(' ');
    console.log(
      `${p.name.padEnd(42)} ${String(p.balance.reqPerSec).padStart(7)} req/s (${ratio} of baseline)  p99 ${String(p.balance.p99Ms).padStart(4)} ms (goal < ${BALANCE_P99_GOAL_MS})${answers ? `  attacker: ${answers}` : ''}`,
    );
  }
  console.log(`balance p99 during the attacks`, attack.pass ? 'PASS' : 'FAIL');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const classifier = await benchClassifier();
  const attack = await benchModerationAttack({ seconds: Number(process.env.BENCH_SECONDS ?? 5) });
  printModeration(classifier, attack);
  process.exit(classifier.pass && attack.pass ? 0 : 1);
}
