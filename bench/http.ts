import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import autocannon from 'autocannon';

export interface HttpResult {
  name: string;
  reqPerSec: number;
  p99Ms: number;
  non2xx: number;
  /** CPU time the server process spent per request: steadier than req/s when the machine is busy. */
  cpuUsPerReq?: number;
}

/** Stops a started process and waits until it has exited (so its data folder can be removed). */
export function stopProcess(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 5000).unref();
  });
}

/** Resident memory of a process in MB (Linux /proc). */
export function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : 0;
}

/** User + system CPU milliseconds used so far by a process (Linux /proc; clock ticks are 10 ms). */
export function cpuMs(pid: number): number | undefined {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return undefined;
  }
}

/**
 * Starts a node script (through tsx) with its output going to `logFile`, and resolves with its URL
 * once it has written "listening on URL". Output goes to a file, not a pipe, so the measuring
 * process never slows the server by reading its logs late.
 */
export async function startProcess(args: string[], env: Record<string, string>, logFile: string): Promise<{ child: ChildProcess; url: string }> {
  const fd = openSync(logFile, 'w');
  const child = spawn(process.execPath, ['--import', 'tsx', ...args], { env: { ...process.env, ...env }, stdio: ['ignore', fd, fd] });
  closeSync(fd);
  for (let i = 0; i < 600; i++) {
    const m = /listening on (http:\/\/\S+)/.exec(readFileSync(logFile, 'utf8'));
    if (m) return { child, url: m[1]! };
    if (child.exitCode !== null) break;
    await sleep(100);
  }
  child.kill();
  throw new Error(`${args.join(' ')} did not start:\n${readFileSync(logFile, 'utf8')}`);
}

/**
 * Waits until a process is idle (under 3 % of a core over 300 ms, at most `limitMs`): work left over
 * from the previous target (the engine's last steps, a WAL checkpoint after thousands of tasks) is
 * not counted against the next one.
 */
export async function settle(pid: number | undefined, limitMs = 30_000): Promise<void> {
  if (!pid) return;
  for (const end = Date.now() + limitMs; Date.now() < end;) {
    const before = cpuMs(pid);
    await sleep(300);
    const after = cpuMs(pid);
    if (before === undefined || after === undefined || after - before <= 10) return;
  }
}

/** Runs autocannon against one URL and returns req/s, p99 and the count of non-2xx answers. */
export async function measure(
  name: string,
  url: string,
  opts: { headers?: Record<string, string>; method?: 'GET' | 'POST'; body?: string; seconds: number; connections: number; pid?: number },
): Promise<HttpResult> {
  const before = opts.pid ? cpuMs(opts.pid) : undefined;
  const r = await autocannon({
    url,
    headers: opts.headers,
    method: opts.method ?? 'GET',
    body: opts.body,
    duration: opts.seconds,
    connections: opts.connections,
  });
  const after = opts.pid ? cpuMs(opts.pid) : undefined;
  const cpuUsPerReq =
    before !== undefined && after !== undefined && r.requests.total > 0 ? Math.round(((after - before) * 1000) / r.requests.total) : undefined;
  return { name, reqPerSec: Math.round(r.requests.average), p99Ms: r.latency.p99, non2xx: r.non2xx, cpuUsPerReq };
}
