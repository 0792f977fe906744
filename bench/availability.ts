// Availability under hostile load (issue 39): another tenant's p99 during a flood, as a ratio to its p99 in the same run.
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig } from '../src/config.js';
import { buildServices } from '../src/services.js';
import { measure, settle, startProcess, stopProcess } from './http.js';

/** The target: another tenant's p99 during a flood at most twice its baseline. */
export const MAX_P99_RATIO = 2;
const PASSWORD = 'bench password 0123';
/** A 1×1 PNG, the file the other tenant downloads. */
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

export interface AvailabilityFigure {
  name: string;
  target: string;
  baselineP99Ms: number;
  duringP99Ms: number;
  ratio: number;
  /** What the flood did meanwhile (requests answered, by status). */
  flood: Record<string, number>;
  pass: boolean;
}

/** One wrong-key base64 upload after another on one connection each: headers promising 267 MB, then 1 MB writes until the server closes. */
async function wrongKeyUploads(url: string, until: () => boolean, seen: Record<string, number>): Promise<void> {
  const { port } = new URL(url);
  const chunk = Buffer.alloc(1024 * 1024, 0x41);
  while (!until()) {
    await new Promise<void>((resolve) => {
      const socket = connect({ host: '127.0.0.1', port: Number(port) });
      let answer = '';
      socket.on('data', (d) => (answer += d));
      socket.on('error', () => {});
      socket.on('close', () => {
        const status = answer.split(' ')[1] ?? 'reset';
        seen[status] = (seen[status] ?? 0) + 1;
        resolve();
      });
      socket.write(
        `POST /api/file-base64-upload HTTP/1.1\r\nhost: x\r\nauthorization: Bearer gg_live_wrongwrongwrongwrongwrong\r\ncontent-type: application/json\r\ncontent-length: ${267 * 1024 * 1024}\r\n\r\n{"base64Data":"`,
      );
      const pump = () => {
        while (!socket.destroyed && socket.write(chunk));
        if (!socket.destroyed) socket.once('drain', pump);
      };
      pump();
    });
  }
}

/** Sign-ins with the right password from `address`, one after another, `count` of them (within SIGNIN_LIMIT_PER_ADDRESS). */
async function signIns(url: string, address: string, email: string, count: number, seen: Record<string, number>): Promise<void> {
  const body = JSON.stringify({ email, password: PASSWORD });
  for (let i = 0; i < count; i++) {
    const status = await new Promise<string>((resolve) => {
      const req = request(
        `${url}/api/v1/auth/signin`,
        { method: 'POST', localAddress: address, agent: false, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
        (res) => {
          res.resume();
          res.on('end', () => resolve(String(res.statusCode)));
        },
      );
      req.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? 'error'));
      req.end(body);
    });
    seen[status] = (seen[status] ?? 0) + 1;
  }
}

/**
 * Another tenant's API (GET balance) and file download (a stored file) measured alone, then during
 * 8 wrong-key base64 uploads at once (each promising 267 MB), then during 240 sign-ins from 8
 * addresses (30 each: SIGNIN_LIMIT_PER_ADDRESS), all in one run on one `gengate serve`.
 */
export async function benchAvailability(opts: { seconds: number; connections: number }): Promise<AvailabilityFigure[]> {
  const dir = mkdtempSync(path.join(tmpdir(), 'gengate-bench-avail-'));
  const env = {
    DATA_DIR: dir,
    LOG_LEVEL: 'warn',
    MODERATION_IMAGES: 'off',
    RATE_LIMIT_WRITE: '1000000',
    RATE_LIMIT_READ: '1000000',
    RATE_LIMIT_PUBLIC: '1000000',
  };
  const setup = await buildServices(loadConfig({ ...env, RUN_ENGINE: 'false' }));
  const other = await setup.accounts.create('other tenant', 1_000_000);
  const signers = await setup.accounts.create('signers', 1_000_000);
  const emails = Array.from({ length: 8 }, (_, i) => `signer${i}@example.com`);
  for (const email of emails) await setup.members.create(signers.account.id, email, 'member', PASSWORD);
  await setup.close();
  const server = await startProcess(['src/main.ts', 'serve'], { ...env, PORT: '0', SIGNIN_LIMIT_PER_EMAIL: '1000' }, path.join(dir, 'serve.log'));
  const figures: AvailabilityFigure[] = [];
  try {
    const up = await fetch(`${server.url}/api/file-base64-upload`, {
      method: 'POST',
      headers: { authorization: `Bearer ${other.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ base64Data: PNG, fileName: 'dot.png' }),
    });
    const file = new URL(((await up.json()) as { data: { downloadUrl: string } }).data.downloadUrl).pathname;
    const targets: Array<{ target: string; url: string; headers: Record<string, string> }> = [
      { target: 'GET /api/v1/user/balance', url: `${server.url}/api/v1/user/balance`, headers: { authorization: `Bearer ${other.apiKey}` } },
      { target: 'GET /files/<id>/<name>', url: `${server.url}${file}`, headers: {} },
    ];
    const run = (t: (typeof targets)[number]) =>
      measure(t.target, t.url, { headers: t.headers, seconds: opts.seconds, connections: opts.connections, pid: server.child.pid });
    let runs = 0;
    const floods: Array<[string, (done: () => boolean, seen: Record<string, number>) => Promise<unknown>]> = [
      ['8 wrong-key base64 uploads at once', (done, seen) => Promise.all(Array.from({ length: 8 }, () => wrongKeyUploads(server.url, done, seen)))],
      // Each run from 8 addresses of its own: the per-address limit of an earlier run's addresses is used up.
      [
        '240 sign-ins from 8 addresses',
        (_done, seen) => {
          const net = ++runs;
          return Promise.all(emails.map((email, i) => signIns(server.url, `127.0.${net}.${i + 2}`, email, 30, seen)));
        },
      ],
    ];
    for (const t of targets) {
      for (const [name, flood] of floods) {
        await settle(server.child.pid);
        const baseline = await run(t);
        await settle(server.child.pid);
        let over = false;
        const seen: Record<string, number> = {};
        const flooding = flood(() => over, seen);
        const during = await run(t);
        over = true;
        await flooding;
        const ratio = Math.round((during.p99Ms / Math.max(1, baseline.p99Ms)) * 100) / 100;
        figures.push({ name, target: t.target, baselineP99Ms: baseline.p99Ms, duringP99Ms: during.p99Ms, ratio, flood: seen, pass: ratio <= MAX_P99_RATIO });
      }
    }
  } finally {
    await stopProcess(server.child);
    rmSync(dir, { recursive: true, force: true });
  }
  return figures;
}

/** Prints the figures as the bench's other sections do. */
export function printAvailability(figures: AvailabilityFigure[]): void {
  console.log(`\nAvailability (issue 39): another tenant's p99 during a flood, at most ${MAX_P99_RATIO}× its baseline in the same run`);
  for (const f of figures) {
    const flood = Object.entries(f.flood)
      .map(([status, n]) => `${n}× ${status}`)
      .join(', ');
    console.log(
      `  ${f.pass ? 'PASS' : 'FAIL'} ${f.target} during ${f.name}: p99 ${f.duringP99Ms} ms vs ${f.baselineP99Ms} ms alone = ${f.ratio}× (flood answered: ${flood})`,
    );
  }
}
