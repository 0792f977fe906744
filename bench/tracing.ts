// Issue 38: what tracing costs createTask (decision 2603). Two GenGate processes, tracing off and on
// (OTLP to a local sink), measured in alternating rounds; and the hooks' own cost when off.
import { createServer } from 'node:http';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { measure, settle, startProcess, stopProcess, type HttpResult } from './http.js';
import { drain, topUp } from './burst.js';
import { tracing } from '../src/tracing/index.js';

export interface TracingBench {
  off: HttpResult;
  /** Tracing on as configured by default (OTEL_TRACES_SAMPLER_ARG 0.1). */
  on: HttpResult;
  /** Tracing on, every trace kept (OTEL_TRACES_SAMPLER_ARG=1), for information. */
  all: HttpResult;
  /** createTask req/s with tracing on ÷ off (target ≥ 0.9). */
  ratio: number;
  /** The same by server CPU per request. */
  cpuRatio?: number;
  /** req/s with every trace kept ÷ off, and by CPU per request. */
  allRatio: number;
  allCpuRatio?: number;
  spansReceived: number;
  /** What the hooks of one task cost when tracing is off (one request, its create, about 6 engine and callback hooks). */
  offHookNsPerTask: number;
  /** …as a share of createTask's CPU per request with tracing off. */
  offSharePercent?: number;
  pass: boolean;
}

/** Hook calls of one task with the local backend: request end, create (2), engine steps (~2), backend calls (~3), callback (1). */
const HOOKS_PER_TASK = 9;

/** ns per call of tracing.span with tracing off, minus the direct call it wraps. */
async function offHookNs(): Promise<number> {
  const fn = () => Promise.resolve(1);
  const n = 200_000;
  const time = async (call: () => Promise<number>) => {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < n; i++) await call();
    return Number(process.hrtime.bigint() - t0) / n;
  };
  const rounds: number[] = [];
  for (let r = 0; r < 5; r++) {
    const direct = await time(fn);
    const hooked = await time(() => tracing.span('bench', { 'gengate.task_id': 'tk_x' }, fn, tracing.contextOf(null)));
    rounds.push(Math.max(0, hooked - direct));
  }
  return rounds.sort((a, b) => a - b)[2]!;
}

export async function benchTracing(opts: { seconds: number; connections: number; rounds: number; body: string }): Promise<TracingBench> {
  let spans = 0;
  const sink = createServer((req, res) => {
    let text = '';
    req.on('data', (c: Buffer) => (text += c));
    req.on('end', () => {
      spans += (text.match(/"spanId"/g) ?? []).length;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', resolve));
  const a = sink.address();
  const endpoint = `http://127.0.0.1:${typeof a === 'object' && a ? a.port : 0}`;
  const start = async (extra: Record<string, string>) => {
    const dir = mkdtempSync(path.join(tmpdir(), 'gengate-bench-trace-'));
    const env = {
      DATA_DIR: dir,
      PORT: '0',
      NODE_ENV: 'production',
      LOG_LEVEL: 'info',
      RATE_LIMIT_WRITE: '1000000000',
      RATE_LIMIT_READ: '1000000000',
      ...extra,
    };
    const p = await startProcess(['src/main.ts', 'serve'], env, path.join(dir, 'gengate.log'));
    await topUp(dir, 1_000_000);
    return { ...p, dir, key: readFileSync(path.join(dir, 'first-api-key.txt'), 'utf8').trim() };
  };
  const off = await start({});
  const on = await start({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_ENDPOINT: endpoint });
  const all = await start({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_TRACES_SAMPLER_ARG: '1' });
  try {
    const samples: Record<'off' | 'on' | 'all', HttpResult[]> = { off: [], on: [], all: [] };
    const round = async (name: 'off' | 'on' | 'all', p: typeof off, seconds: number) => {
      const r = await measure(`createTask, tracing ${name}`, `${p.url}/api/v1/jobs/createTask`, {
        method: 'POST',
        body: opts.body,
        headers: { authorization: `Bearer ${p.key}`, 'content-type': 'application/json' },
        seconds,
        connections: opts.connections,
        pid: p.child.pid,
      });
      await drain(p.dir);
      await settle(p.child.pid);
      return r;
    };
    await round('off', off, 1);
    await round('on', on, 1);
    await round('all', all, 1);
    // Alternating rounds, so background load hits all three alike.
    for (let i = 0; i < opts.rounds; i++) {
      samples.off.push(await round('off', off, opts.seconds));
      samples.on.push(await round('on', on, opts.seconds));
      samples.all.push(await round('all', all, opts.seconds));
    }
    const median = (rs: HttpResult[]) => [...rs].sort((x, y) => x.reqPerSec - y.reqPerSec)[Math.floor(rs.length / 2)]!;
    const mOff = median(samples.off);
    const mOn = median(samples.on);
    const mAll = median(samples.all);
    const r3 = (x: number) => Math.round(x * 1000) / 1000;
    const ratio = r3(mOn.reqPerSec / mOff.reqPerSec);
    const cpuRatio = mOff.cpuUsPerReq && mOn.cpuUsPerReq ? r3(mOff.cpuUsPerReq / mOn.cpuUsPerReq) : undefined;
    const allRatio = r3(mAll.reqPerSec / mOff.reqPerSec);
    const allCpuRatio = mOff.cpuUsPerReq && mAll.cpuUsPerReq ? r3(mOff.cpuUsPerReq / mAll.cpuUsPerReq) : undefined;
    const offHookNsPerTask = Math.round((await offHookNs()) * HOOKS_PER_TASK);
    const offSharePercent = mOff.cpuUsPerReq ? Math.round((offHookNsPerTask / 1000 / mOff.cpuUsPerReq) * 10_000) / 100 : undefined;
    return {
      off: mOff,
      on: mOn,
      all: mAll,
      ratio,
      cpuRatio,
      allRatio,
      allCpuRatio,
      spansReceived: spans,
      offHookNsPerTask,
      offSharePercent,
      pass: ratio >= 0.9 && spans > 0 && mOn.non2xx === 0,
    };
  } finally {
    await Promise.all([off, on, all].map((p) => stopProcess(p.child)));
    for (const p of [off, on, all]) rmSync(p.dir, { recursive: true, force: true });
    sink.close();
  }
}

export function printTracing(t: TracingBench): void {
  console.log(
    `createTask with tracing on (OTLP to a local sink, 1 trace in 10 kept): ${t.on.reqPerSec} req/s against ${t.off.reqPerSec} off = ${t.ratio} (min 0.9; by CPU per request ${t.cpuRatio ?? '?'}), ${t.spansReceived} spans received`,
    t.pass ? 'PASS' : 'FAIL',
  );
  console.log(
    `createTask with every trace kept (OTEL_TRACES_SAMPLER_ARG=1): ${t.all.reqPerSec} req/s = ${t.allRatio} of off (by CPU per request ${t.allCpuRatio ?? '?'}; for information)`,
  );
  console.log(
    `tracing off: the hooks of one task cost ${t.offHookNsPerTask} ns = ${t.offSharePercent ?? '?'} % of createTask's ${t.off.cpuUsPerReq ?? '?'} µs CPU per request (for information)`,
  );
}
