import { execFile, spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { inject } from 'vitest';
import { CLIENT_COMMANDS } from '../../packages/client/src/cli/main.js';
import { UNLIMITED } from './server.js';
import { sourcesMain } from './source-build.js';

/**
 * The sources of this run, compiled once by the global setup, so a stale dist/ can never be what a
 * test checks (decision 0020) and no process pays for transpiling them again (decision 3100);
 * test/ops/build.test.ts checks the compiled program. Outside vitest (`npm run chaos`), through tsx.
 */
export const GENGATE = process.env.VITEST ? [sourcesMain(inject('sourceBuild'))] : ['--import', 'tsx', 'src/main.ts'];

/**
 * The client commands (run, tasks, upload, balance, login) start the SDK package's CLI directly, as
 * bin/gengate.js does for users: it loads nothing of the server (decision 2200).
 */
function programFor(args: string[]): string[] {
  if (!(CLIENT_COMMANDS as readonly string[]).includes(args[0] ?? '')) return GENGATE;
  if (!process.env.VITEST) return ['--import', 'tsx', 'packages/client/src/cli/main.ts'];
  return [path.join(inject('sourceBuild'), 'packages', 'client', 'dist', 'cli', 'main.js')];
}

/**
 * How long a `gengate serve` may take to say it listens before its test fails naming that (below a
 * hook's limit). Tests and hooks that start real processes (`gengate` commands, servers) have a
 * 240 s limit (`}, 240_000)`): there only so a hang fails the test instead of the run, generous as
 * CI's two cores run four files at once and a process start there takes five to ten times what it
 * takes on a quiet machine (decision 3100).
 */
export const SERVE_START_MS = 100_000;

/** Runs the real `gengate` program (from the sources); resolves with its exit code and output (never rejects on a non-zero exit). */
export function gengate(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [...programFor(args), ...args], { env: { ...process.env, LOG_LEVEL: 'silent', ...env } }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

/** Servers spawned by this test process and not yet gone: killed when it exits, whatever the test did. */
const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/** Starts `gengate serve` (with `args`, e.g. --role worker) and waits for its "listening" line; returns the process, its URL and everything it printed. */
export async function spawnServe(env: Record<string, string>, args: string[] = []): Promise<{ child: ChildProcess; url: string; output: () => string }> {
  const child = spawn(process.execPath, [...GENGATE, 'serve', ...args], { env: { ...process.env, LOG_LEVEL: 'warn', PORT: '0', ...UNLIMITED, ...env } });
  running.add(child);
  child.once('exit', () => running.delete(child));
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  let timer: NodeJS.Timeout | undefined;
  const listening = new Promise<string>((resolve, reject) => {
    // A bound only so a server that never starts fails the test instead of hanging it: generous, as a
    // busy machine starts it slowly, and below a hook's limit, so the error names the cause.
    timer = setTimeout(() => reject(new Error(`serve did not start within ${SERVE_START_MS / 1000} s:\n${out}`)), SERVE_START_MS);
    const check = () => {
      const m = /listening on (http:\/\/[^\s]+)/.exec(out);
      if (m) resolve(m[1]!);
    };
    child.stdout!.on('data', check);
    child.on('exit', (code) => reject(new Error(`serve exited with ${code}:\n${out}`)));
  });
  try {
    return { child, url: await listening, output: () => out };
  } catch (e) {
    // Never leave a child behind: one that has not started (or not yet) is killed and awaited.
    await stop(child, 'SIGKILL');
    throw e;
  } finally {
    clearTimeout(timer);
  }
}

/** Stops a spawned server and waits for it to exit. */
export function stop(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
  return new Promise((resolve) => {
    // A child killed by a signal has exitCode null but signalCode set: it is gone too.
    if (child.exitCode !== null || child.signalCode !== null) return resolve(child.exitCode);
    child.once('exit', (code) => resolve(code));
    child.kill(signal);
  });
}
