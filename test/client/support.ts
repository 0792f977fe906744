import { execFile } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Clock } from '../../src/clock.js';
import { GenGate, type GenGateOptions } from '../../packages/client/src/index.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { FAST } from '../tasks/support.js';

/**
 * A GenGate on loopback whose PUBLIC_BASE_URL is a real address: a small forwarding server is
 * started first, its port named in PUBLIC_BASE_URL, and it passes every request to the app. So the
 * file links in results can be downloaded, as a client does (startServer alone names port 0).
 */
export async function startPublicServer(
  dialect: 'sqlite' | 'postgres',
  env: Record<string, string> = {},
  opts: { clock?: Clock } = {},
): Promise<TestServer & { publicUrl: string; answered(): number }> {
  let target = 0;
  // recordInfo answers sent in full: a test can wait until a client has had one given after some moment.
  let answered = 0;
  const front = http.createServer((req, res) => {
    if (req.url?.startsWith('/api/v1/jobs/recordInfo')) res.once('finish', () => answered++);
    const up = http.request({ host: '127.0.0.1', port: target, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    up.on('error', () => res.destroy());
    req.pipe(up);
  });
  await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
  const publicUrl = `http://127.0.0.1:${(front.address() as AddressInfo).port}`;
  const s = await startServer(dialect, { ...FAST, ALLOW_PRIVATE_NETWORK: 'true', PUBLIC_BASE_URL: publicUrl, ...env }, undefined, opts);
  target = Number(new URL(s.url).port);
  if (env.RUN_ENGINE !== 'false') {
    s.services.engine.start();
    s.services.callbacks.start();
  }
  return {
    ...s,
    publicUrl,
    answered: () => answered,
    close: async () => {
      front.closeAllConnections();
      await new Promise<void>((resolve) => front.close(() => resolve()));
      await s.close();
    },
  };
}

/** An SDK client of `s` that looks at tasks often (tests wait on real engines). */
export function sdk(s: { publicUrl: string }, apiKey: string, o: Partial<GenGateOptions> = {}): GenGate {
  return new GenGate({ apiKey, baseUrl: s.publicUrl, pollIntervalMs: 30, pollMaxMs: 100, ...o });
}

const ROOT = path.resolve(import.meta.dirname, '../..');

/** tsc on `files` with a client's strict settings (NodeNext, Node types); resolves with its exit code and output, never rejects. */
export async function tsc(...files: string[]): Promise<{ code: number; out: string }> {
  const bin = path.join(ROOT, 'node_modules/typescript/bin/tsc');
  const args = ['--noEmit', '--strict', '--target', 'ES2022', '--module', 'NodeNext', '--moduleResolution', 'NodeNext', '--types', 'node', '--skipLibCheck'];
  try {
    const r = await promisify(execFile)(process.execPath, [bin, ...args, ...files], { cwd: ROOT });
    return { code: 0, out: r.stdout };
  } catch (e) {
    const err = e as { code: number; stdout: string };
    return { code: err.code, out: err.stdout };
  }
}
