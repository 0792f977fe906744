// npm run bench: GenGate's endpoints and micro-benchmarks, each next to a bare Fastify server measured in the same run.
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { measure, startProcess, type HttpResult } from './http.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 20);

/** Each HTTP target with the minimum ratio to the bare server that its issue sets. */
const targets: Array<{ name: string; path: string; auth: boolean; minRatio: number }> = [
  { name: 'GET /api/v1/user/balance', path: '/api/v1/user/balance', auth: true, minRatio: 0.5 },
];

const dataDir = mkdtempSync(path.join(tmpdir(), 'gengate-bench-'));
const bare = await startProcess(['bench/bare-server.ts'], {});
const gengate = await startProcess(['src/main.ts', 'serve'], { DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info' });
const key = readFileSync(path.join(dataDir, 'first-api-key.txt'), 'utf8').trim();

const results: Array<HttpResult & { ratio?: number; minRatio?: number; pass?: boolean }> = [];
try {
  const warm = { seconds: 1, connections };
  await measure('warm-up', `${bare.url}/`, warm);
  const base = await measure('bare Fastify hello-world', `${bare.url}/`, { seconds, connections });
  results.push(base);
  for (const t of targets) {
    const headers = t.auth ? { authorization: `Bearer ${key}` } : undefined;
    await measure('warm-up', gengate.url + t.path, { ...warm, headers });
    const r = await measure(t.name, gengate.url + t.path, { headers, seconds, connections });
    const ratio = Math.round((r.reqPerSec / base.reqPerSec) * 1000) / 1000;
    results.push({ ...r, ratio, minRatio: t.minRatio, pass: ratio >= t.minRatio && r.non2xx === 0 });
  }
} finally {
  bare.child.kill();
  gengate.child.kill();
  rmSync(dataDir, { recursive: true, force: true });
}

console.log(`\nconnections=${connections}, ${seconds}s per target, node ${process.version}\n`);
console.log('target'.padEnd(36), 'req/s'.padStart(9), 'p99 ms'.padStart(8), 'ratio'.padStart(7), 'min'.padStart(5), ' result');
for (const r of results) {
  console.log(
    r.name.padEnd(36),
    String(r.reqPerSec).padStart(9),
    String(r.p99Ms).padStart(8),
    (r.ratio === undefined ? '1' : String(r.ratio)).padStart(7),
    (r.minRatio === undefined ? '' : String(r.minRatio)).padStart(5),
    r.pass === undefined ? ' baseline' : r.pass ? ' PASS' : ' FAIL',
  );
}
mkdirSync('bench/results', { recursive: true });
writeFileSync('bench/results/latest.json', `${JSON.stringify({ date: new Date().toISOString(), node: process.version, seconds, connections, http: results }, null, 2)}\n`);
console.log('\nwritten bench/results/latest.json');
process.exit(results.every((r) => r.pass !== false) ? 0 : 1);
