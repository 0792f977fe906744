import { readdirSync, readlinkSync } from 'node:fs';
import { mkdtemp, readFile, rm, truncate, writeFile } from 'node:fs/promises';
import { Agent, createServer, get, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';
import { open, untilClosed, within } from '../helpers/sockets.js';
import { spawnServe, stop } from '../helpers/cli.js';
import { eventually } from '../tasks/support.js';
import { sentBytes } from '../../src/http/read-rate.js';

const MB = 1024 * 1024;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Stores a `bytes`-long file (sparse: quick to make) for a new account; returns its path on the server. */
async function storeFile(s: TestServer, bytes: number): Promise<{ path: string; id: string }> {
  const dir = await mkdtemp(path.join(tmpdir(), 'gengate-slow-readers-'));
  const src = path.join(dir, 'big.bin');
  await writeFile(src, '');
  await truncate(src, bytes);
  const { files, database, clock } = s.services;
  const saved = await files.save(src, 'big.bin', 'application/octet-stream', { move: true });
  const { id: account } = await s.account(1);
  await database.tx((trx) =>
    files.record(trx, [
      { ...saved, account_id: account, task_id: null, purpose: 'upload', kind: null, format: null, seconds: null, expires_at: clock.now() + 3_600_000 },
    ]),
  );
  await rm(dir, { recursive: true, force: true });
  return { path: `/files/${saved.id}/big.bin`, id: saved.id };
}

/** Open files of this process (the server runs in it) whose path holds `part`. */
function openFilesNamed(part: string): number {
  let n = 0;
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      if (readlinkSync(`/proc/self/fd/${fd}`).includes(part)) n++;
    } catch {
      /* closed meanwhile */
    }
  }
  return n;
}

/**
 * A raw GET of `path` on a new connection; the client reads nothing (its socket stays paused, so it
 * would not even see the server close it). `closed` settles when the server's side of the
 * connection closes.
 */
async function stalledGet(s: TestServer, path: string): Promise<{ socket: Socket; server: Socket; closed: Promise<void> }> {
  const accepted: Socket[] = [];
  const onConnection = (c: Socket) => accepted.push(c);
  s.app.server.on('connection', onConnection);
  const socket = await open(s.url);
  socket.pause();
  socket.on('error', () => {});
  socket.write(`GET ${path} HTTP/1.1\r\nhost: x\r\n\r\n`);
  await eventually(() => accepted.some((c) => c.remotePort === socket.localPort), 10_000, 'the connection being accepted');
  s.app.server.off('connection', onConnection);
  const server = accepted.find((c) => c.remotePort === socket.localPort)!;
  const closed = server.destroyed ? Promise.resolve() : new Promise<void>((resolve) => server.once('close', () => resolve()));
  return { socket, server, closed };
}

/** Reads a raw GET of `path` (with `connection: close`) at about `perSecond` bytes per second; resolves with the bytes received when the connection closes. */
async function steadyGet(url: string, path: string, perSecond: number): Promise<number> {
  const socket = await open(url);
  socket.pause();
  const started = Date.now();
  let got = 0;
  // Read only while behind the schedule, stopping at the first chunk past it (a resumed socket would
  // otherwise take all the kernel holds at once): the socket is paused in between, so the server sees
  // backpressure, and the pace is steady from the first byte.
  const due = () => ((Date.now() - started) * perSecond) / 1000;
  socket.on('data', (d: Buffer) => {
    got += d.length;
    if (got >= due()) socket.pause();
  });
  socket.write(`GET ${path} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n`);
  return new Promise((resolve) => {
    const done = () => (clearInterval(pace), socket.destroy(), resolve(got));
    const pace = setInterval(() => {
      if (got < due()) socket.resume();
    }, 10);
    socket.once('close', done);
  });
}

/** gengate_http_connections_cut_total{reason}, read from the counter (the database may be closed already). */
const cutCount = async (s: TestServer, reason: string) => (await s.services.metrics.connectionsCut.get()).values.find((v) => v.labels.reason === reason)?.value;

describe('sentBytes', () => {
  it('counts bytes the kernel took of a chunk still being written (the public counters count whole chunks only)', async () => {
    const server: Server = createServer((_req, res) => res.end(Buffer.alloc(64 * MB)));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    let conn: Socket | undefined;
    server.on('connection', (c: Socket) => (conn = c));
    const client = connect((server.address() as AddressInfo).port, '127.0.0.1');
    client.pause();
    client.write('GET / HTTP/1.1\r\nhost: x\r\n\r\n');
    try {
      await within(
        (async () => {
          while (!conn || conn.bytesWritten < 64 * MB) await sleep(20);
        })(),
        20_000,
        'the answer being written',
      );
      await sleep(200);
      // One 64 MB chunk, part of it in the kernel's buffers, the client reading nothing.
      expect(conn!.bytesWritten - conn!.writableLength).toBe(0);
      expect(sentBytes(conn!)).toBeGreaterThan(64 * 1024);
      expect(sentBytes(conn!)).toBeLessThan(64 * MB);
    } finally {
      client.destroy();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });
});

// The kernel takes about 4 MB of an answer on loopback before the server sees backpressure, so the
// files are larger than that and the "slow" rates are high: a steady reader must read the file
// within a few seconds and still spend several windows held back by the server's minimum.
const READ_GUARD = {
  HTTP_RESPONSE_MIN_BYTES_PER_SECOND: String(256 * 1024),
  HTTP_BODY_RATE_WINDOW_MS: '1000',
  SHUTDOWN_GRACE_MS: '1000',
};

describe('a minimum read rate for responses', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer('sqlite', READ_GUARD);
  });
  afterAll(async () => {
    await s?.close();
  });

  it('a client that requests a large file and reads nothing is cut after the window; its file is closed; others are served meanwhile', async () => {
    const file = await storeFile(s, 48 * MB);
    const started = Date.now();
    const stalled = await stalledGet(s, file.path);
    await eventually(() => openFilesNamed(file.id) > 0, 15_000, 'the file being opened');
    // Meanwhile other clients are answered.
    for (let i = 0; i < 3; i++) expect((await s.call('GET', '/healthz')).status).toBe(200);
    // Without the guard it would never be cut; the bound only turns that into a failure, generous for a busy machine.
    await within(stalled.closed, 30_000, 'the stalled download being cut');
    // At least one whole window of no progress.
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_000);
    await eventually(() => openFilesNamed(file.id) === 0, 10_000, 'the file being closed');
    expect(await cutCount(s, 'slow_response_read')).toBe(1);
    expect((await s.call('GET', '/healthz')).status).toBe(200);
    stalled.socket.destroy();
  });

  it('a steady reader well above the minimum gets the whole file over several windows', async () => {
    const size = 12 * MB;
    const file = await storeFile(s, size);
    const before = await cutCount(s, 'slow_response_read');
    const started = Date.now();
    const got = await within(steadyGet(s.url, file.path, 3 * MB), 20_000, 'the steady download');
    // The answer's head comes on top of the file.
    expect(got).toBeGreaterThan(size);
    // The reader was held back by its pace (not the kernel's buffers) for several windows.
    expect(Date.now() - started).toBeGreaterThan(3_000);
    expect(await cutCount(s, 'slow_response_read')).toBe(before);
  });

  it('an answer that waits on the app, not on the client, is not cut', async () => {
    // A request that is answered only after three windows: nothing is queued, so no window counts.
    const late = await startServer('sqlite', READ_GUARD, (app) => app.get('/test/late', async () => (await sleep(3_000), { ok: true })));
    try {
      const r = await late.call('GET', '/test/late');
      expect(r.status).toBe(200);
      expect(await cutCount(late, 'slow_response_read')).toBe(0);
    } finally {
      await late.close();
    }
  });
});

describe('shutdown that cannot be held open', () => {
  it('close() with a stalled download returns within the grace period; an in-flight request completes during it', async () => {
    // Long enough for the 600 ms answer to finish in it on a busy machine.
    const grace = 4_000;
    const s = await startServer('sqlite', { HTTP_RESPONSE_MIN_BYTES_PER_SECOND: '0', SHUTDOWN_GRACE_MS: String(grace) }, (app) =>
      app.get('/test/slow-answer', async () => (await sleep(600), { ok: true })),
    );
    let closed = false;
    try {
      const file = await storeFile(s, 32 * MB);
      const stalled = await stalledGet(s, file.path);
      await eventually(() => openFilesNamed(file.id) > 0, 15_000, 'the file being opened');
      const inFlight = s.call('GET', '/test/slow-answer');
      await sleep(100);
      const started = Date.now();
      const closing = s.close().then(() => (closed = true));
      const answer = await inFlight;
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual({ ok: true });
      expect(stalled.server.destroyed).toBe(false);
      await within(closing, grace + 15_000, 'the close');
      const took = Date.now() - started;
      expect(took).toBeGreaterThanOrEqual(grace - 50);
      // Nothing else would ever end it (no rate guard here): only the close can.
      await within(stalled.closed, 10_000, 'the stalled download being destroyed');
      // The file stream closes its descriptor asynchronously after the response closes.
      await eventually(() => openFilesNamed(file.id) === 0, 10_000, 'the file being closed');
      expect(await cutCount(s, 'shutdown_grace')).toBe(1);
      stalled.socket.destroy();
    } finally {
      if (!closed) await s.close();
    }
  });

  it('a keep-alive connection whose answer finishes during the grace period is closed then, not at the end of the grace period', async () => {
    // A grace of 30 s: closing at its end instead of when the answer finishes would fail the 15 s bound below.
    const s = await startServer('sqlite', { SHUTDOWN_GRACE_MS: '30000' }, (app) => app.get('/test/slow-answer', async () => (await sleep(300), { ok: true })));
    let closed = false;
    const agent = new Agent({ keepAlive: true });
    try {
      const inFlight = new Promise<{ status: number; body: string }>((resolve, reject) => {
        get(`${s.url}/test/slow-answer`, { agent }, (res) => {
          let body = '';
          res.on('data', (d) => (body += d));
          res.on('end', () => resolve({ status: res.statusCode!, body }));
        }).on('error', reject);
      });
      // An idle keep-alive connection too: closed at once.
      await new Promise<void>((resolve, reject) =>
        get(`${s.url}/healthz`, { agent: new Agent({ keepAlive: true }) }, (r) => (r.resume(), resolve())).on('error', reject),
      );
      await sleep(50);
      const started = Date.now();
      const closing = s.close().then(() => (closed = true));
      expect((await inFlight).status).toBe(200);
      await within(closing, 15_000, 'the close');
      expect(Date.now() - started).toBeLessThan(15_000);
      expect(await cutCount(s, 'shutdown_grace')).toBe(0);
    } finally {
      agent.destroy();
      if (!closed) await s.close();
    }
  });

  it('gengate serve: SIGTERM with a request stuck in flight exits within the grace period', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'gengate-stop-'));
    const grace = 1_000;
    // No body rate: only the grace period can end the stuck request.
    const { child, url, output } = await spawnServe({
      DATA_DIR: dir,
      MODERATION_IMAGES: 'off',
      SHUTDOWN_GRACE_MS: String(grace),
      HTTP_BODY_MIN_BYTES_PER_SECOND: '0',
    });
    try {
      const socket = await open(url);
      const answer = untilClosed(socket);
      // The first-run key: a request without one is answered 401 before its body (decision 2300), and so never stuck.
      const key = (await readFile(path.join(dir, 'first-api-key.txt'), 'utf8')).trim();
      socket.write(
        `POST /api/v1/jobs/createTask HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${key}\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n{"model":`,
      );
      await sleep(200);
      const started = Date.now();
      const code = await within(stop(child), grace + 10_000, 'gengate serve exiting');
      expect(code, output()).toBe(0);
      expect(Date.now() - started).toBeGreaterThanOrEqual(grace - 50);
      await within(answer, 10_000, 'the stuck connection being closed');
      expect(output()).not.toMatch(/"level":50/);
    } finally {
      if (child.exitCode === null && child.signalCode === null) await stop(child, 'SIGKILL');
      await rm(dir, { recursive: true, force: true });
    }
  }, 240_000);
});
