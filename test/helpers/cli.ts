import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { UNLIMITED } from './server.js';

// The TypeScript sources through tsx, like vitest itself, so a stale dist/ can never be what a test
// checks; test/ops/build.test.ts checks the compiled program (decision 0020).
const GENGATE = ['--import', 'tsx', 'src/main.ts'];

/** Runs the real `gengate` program (from the sources); resolves with its exit code and output (never rejects on a non-zero exit). */
export function gengate(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [...GENGATE, ...args], { env: { ...process.env, LOG_LEVEL: 'silent', ...env } }, (err, stdout, stderr) => {
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
    // busy machine starts it slowly, and below the 60 s of a hook, so the error names the cause.
    timer = setTimeout(() => reject(new Error(`serve did not start within 50 s:\n${out}`)), 50_000);
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
