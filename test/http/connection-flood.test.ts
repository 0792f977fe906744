import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { get } from 'node:http';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UNLIMITED } from '../helpers/server.js';
import { GENGATE, stop } from '../helpers/cli.js';
import { open, untilClosed, within } from '../helpers/sockets.js';
import { PRLIMIT, needs } from '../helpers/tools.js';

/** prlimit (util-linux) lowers the running server's open-file limit after it has started (its module loading opens many files at once). */
const prlimit = needs('prlimit') ? PRLIMIT : undefined;

/** GET `path` from `localAddress`: the status, or the error code the client saw. */
function getFrom(url: string, p: string, localAddress: string): Promise<number | string> {
  return new Promise((resolve) => {
    get(`${url}${p}`, { localAddress, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode!));
    }).on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
  });
}

/**
 * Issue 17 finding 3 as it was seen: one client holding hundreds of idle connections used up the
 * process's open files, and other clients got ECONNRESET. The real `gengate serve` with a small
 * open-file limit; SQLite only, as the cap works below the database.
 */
describe.skipIf(!prlimit)('a connection flood against a server with a small open-file limit', () => {
  let child: ChildProcess;
  let url: string;
  const dir = mkdtempSync(path.join(tmpdir(), 'gengate-flood-'));
  beforeAll(async () => {
    child = spawn(process.execPath, [...GENGATE, 'serve'], {
      env: { ...process.env, ...UNLIMITED, DATA_DIR: dir, PORT: '0', LOG_LEVEL: 'warn', MODERATION_IMAGES: 'off', HTTP_MAX_CONNECTIONS_PER_ADDRESS: '20' },
    });
    let out = '';
    child.stderr!.on('data', (d) => (out += d));
    const listening = new Promise<string>((resolve) =>
      child.stdout!.on('data', (d) => {
        out += d;
        const m = /listening on (http:\/\/\S+)/.exec(out);
        if (m) resolve(m[1]!);
      }),
    );
    url = await within(listening, 60_000, 'gengate serve starting').catch((e: Error) => Promise.reject(new Error(`${e.message}:\n${out}`)));
    // Room for what the process holds now plus a few dozen more: far fewer than the flood, more than
    // the flood may hold (the cap, and as many again answered 503; decision 2304).
    const held = readdirSync(`/proc/${child.pid}/fd`).length;
    execFileSync(prlimit!, ['--pid', String(child.pid), `--nofile=${held + 60}:${held + 60}`]);
  }, 240_000);
  afterAll(async () => {
    if (child) await stop(child);
    rmSync(dir, { recursive: true, force: true });
  });

  it('300 idle connections from one address leave another address served', async () => {
    const flood: Socket[] = [];
    const closed: Promise<string>[] = [];
    for (let i = 0; i < 300; i++) {
      const socket = await open(url);
      flood.push(socket);
      closed.push(untilClosed(socket));
    }
    try {
      expect(await getFrom(url, '/healthz', '127.0.0.2')).toBe(200);
    } finally {
      for (const socket of flood) socket.destroy();
      await Promise.all(closed);
    }
  });
});
