import { spawn, type ChildProcess } from 'node:child_process';
import autocannon from 'autocannon';

export interface HttpResult {
  name: string;
  reqPerSec: number;
  p99Ms: number;
  non2xx: number;
}

/** Starts a node script (through tsx) and resolves with its URL once it prints "listening on URL". */
export async function startProcess(args: string[], env: Record<string, string>): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (d) => {
      out += d;
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.on('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${code}: ${out}`)));
  });
  child.stdout!.resume();
  return { child, url };
}

/** Runs autocannon against one URL and returns req/s, p99 and the count of non-2xx answers. */
export async function measure(name: string, url: string, opts: { headers?: Record<string, string>; seconds: number; connections: number }): Promise<HttpResult> {
  const r = await autocannon({ url, headers: opts.headers, duration: opts.seconds, connections: opts.connections });
  return { name, reqPerSec: Math.round(r.requests.average), p99Ms: r.latency.p99, non2xx: r.non2xx };
}
