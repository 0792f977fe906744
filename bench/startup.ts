// Start-up (issue 16 item 9): the compiled server from spawn to /healthz answering, and one operator
// command (`gengate account list`) from spawn to exit, each next to a baseline started in the same
// run (a bare Fastify server; `node -e ''`). The goals (2 s and 1 s) are shown with them, and
// the TypeScript sources through tsx (how npm start ran before) for comparison.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

export interface StartupFigure {
  name: string;
  medianMs: number;
  baseline: string;
  baselineMs: number;
  /** medianMs / baselineMs: comparable across machines, unlike the milliseconds. */
  ratio: number;
  goalMs?: number;
  pass?: boolean;
}

const BARE_FASTIFY = `import Fastify from 'fastify';
const app = Fastify();
app.get('/healthz', async () => ({ ok: true }));
await app.listen({ port: 0, host: '127.0.0.1' });
console.log('listening on http://127.0.0.1:' + app.server.address().port);`;

/** Milliseconds from spawning `args` until it has printed "listening on URL" and URL/healthz answers 200; then stops it. */
function untilHealthy(args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const started = performance.now();
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let out = '';
  let asked = false;
  return new Promise<number>((resolve, reject) => {
    child.stderr.on('data', (d) => (out += d));
    child.stdout.on('data', (d) => {
      out += d;
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (!m || asked) return;
      asked = true;
      void fetch(`${m[1]}/healthz`)
        .then(
          (res) => ({ ms: performance.now() - started, status: res.status }),
          () => ({ ms: 0, status: 0 }),
        )
        .then(async ({ ms, status }) => {
          child.kill('SIGTERM');
          await exited;
          if (status === 200) resolve(ms);
          else reject(new Error(`${args.join(' ')}: /healthz answered ${status || 'nothing'}:\n${out}`));
        });
    });
    void exited.then(() => asked || reject(new Error(`${args.join(' ')} exited before listening:\n${out}`)));
  });
}

/** Milliseconds from spawning `args` until it exits with 0. */
function untilExit(args: string[], env: NodeJS.ProcessEnv): number {
  const started = performance.now();
  execFileSync(process.execPath, args, { env, stdio: 'ignore' });
  return performance.now() - started;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Builds dist/ (so the figures are of the current sources), then measures `rounds` rounds, each kind in turn within a round. */
export async function benchStartup(rounds = Number(process.env.BENCH_STARTUP_ROUNDS ?? 5)): Promise<StartupFigure[]> {
  execFileSync('npm', ['run', 'build', '--silent'], { stdio: 'inherit' });
  const dataDir = mkdtempSync(path.join(tmpdir(), 'gengate-bench-start-'));
  const env = { ...process.env, DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'warn', FIRST_RUN_ACCOUNT: 'true' };
  const samples = new Map<string, number[]>();
  const add = (name: string, ms: number) => samples.set(name, [...(samples.get(name) ?? []), ms]);
  try {
    untilExit(['bin/gengate.js', 'migrate'], env); // the first start's migrations are not what is measured
    await untilHealthy(['bin/gengate.js', 'serve'], env); // nor the first-run account
    for (let i = 0; i < rounds; i++) {
      add('node -e', untilExit(['-e', ''], env));
      add('bare Fastify', await untilHealthy(['--input-type=module', '-e', BARE_FASTIFY], env));
      add('serve', await untilHealthy(['bin/gengate.js', 'serve'], env));
      add('serve (tsx)', await untilHealthy(['--import', 'tsx', 'src/main.ts', 'serve'], env));
      add('cli', untilExit(['bin/gengate.js', 'account', 'list'], env));
      add('cli (tsx)', untilExit(['--import', 'tsx', 'src/main.ts', 'account', 'list'], env));
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
  const figure = (name: string, key: string, baseline: string, goalMs?: number): StartupFigure => {
    const medianMs = Math.round(median(samples.get(key)!));
    const baselineMs = Math.round(median(samples.get(baseline)!));
    return {
      name,
      medianMs,
      baseline,
      baselineMs,
      ratio: Math.round((medianMs / baselineMs) * 10) / 10,
      goalMs,
      pass: goalMs === undefined ? undefined : medianMs <= goalMs,
    };
  };
  return [
    figure('start to /healthz (npm start, compiled)', 'serve', 'bare Fastify', 2_000),
    figure('start to /healthz (sources through tsx)', 'serve (tsx)', 'bare Fastify'),
    figure('gengate account list (compiled)', 'cli', 'node -e', 1_000),
    figure('gengate account list (sources through tsx)', 'cli (tsx)', 'node -e'),
  ];
}

/** The start-up table: median milliseconds, the baseline's, the ratio and the goal. */
export function printStartup(figures: StartupFigure[]): void {
  console.log(`\nstart-up, median of ${process.env.BENCH_STARTUP_ROUNDS ?? 5} rounds, node ${process.version}\n`);
  console.log('figure'.padEnd(44), 'ms'.padStart(7), 'baseline'.padStart(22), 'ratio'.padStart(7), 'goal'.padStart(9), ' result');
  for (const f of figures) {
    console.log(
      f.name.padEnd(44),
      String(f.medianMs).padStart(7),
      `${f.baseline} ${f.baselineMs}`.padStart(22),
      String(f.ratio).padStart(7),
      (f.goalMs === undefined ? '' : `${f.goalMs} ms`).padStart(9),
      f.pass === undefined ? ' (information)' : f.pass ? ' PASS' : ' FAIL',
    );
  }
}
