import { createServer, type Server } from 'node:net';
import { readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { buildServices } from '../../src/services.js';
import { gengate, spawnServe, stop } from '../helpers/cli.js';
import { createTestDb, dialects, type TestDb } from '../helpers/db.js';
import { UNLIMITED } from '../helpers/server.js';

const redisUrl = process.env.TEST_REDIS_URL;
const portOf = (url: string | undefined) => (url ? Number(new URL(url).port || 0) : 0);

/** What this process holds (Linux /proc): descriptors on `file` (and its -wal, -shm) and TCP connections to `ports`. */
function held(file: string | null, ports: number[]): string[] {
  const out: string[] = [];
  const sockets = new Set<string>();
  for (const fd of readdirSync('/proc/self/fd')) {
    let target: string;
    try {
      target = readlinkSync(`/proc/self/fd/${fd}`);
    } catch {
      continue; // closed while listing
    }
    if (file && target.startsWith(file)) out.push(target);
    const socket = /^socket:\[(\d+)\]$/.exec(target);
    if (socket) sockets.add(socket[1]!);
  }
  for (const table of ['/proc/self/net/tcp', '/proc/self/net/tcp6']) {
    for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols.length < 10) continue;
      const port = Number.parseInt(cols[2]!.split(':')[1]!, 16);
      if (ports.includes(port) && sockets.has(cols[9]!)) out.push(`tcp connection to port ${port}`);
    }
  }
  return out;
}

/** Polls `fn` until it returns an empty list or 10 s pass; returns its last answer. */
async function emptied(fn: () => string[]): Promise<string[]> {
  let last = fn();
  for (const end = Date.now() + 10_000; last.length > 0 && Date.now() < end; last = fn()) await new Promise((r) => setTimeout(r, 50));
  return last;
}

/** The composition root (issue 16 item 6): a failed start closes what it opened and says why in one line; an api process needs no upstream credentials. */
describe.each(dialects())('starting GenGate on %s', (dialect) => {
  let db: TestDb;
  afterEach(async () => {
    await db?.drop();
  });
  const env = () => ({ DATA_DIR: db.dir, DATABASE_URL: db.url, FIRST_RUN_ACCOUNT: 'false', MODERATION_IMAGES: 'off', LOG_LEVEL: 'silent', ...UNLIMITED });

  it('closes the database, Redis and everything else it opened when a later step fails', async () => {
    db = await createTestDb(dialect);
    const file = dialect === 'sqlite' ? db.url.slice('sqlite:'.length) : null;
    const ports = [portOf(process.env.TEST_DATABASE_URL), portOf(redisUrl)].filter((p) => p > 0);
    expect(held(file, ports)).toEqual([]);
    // The word list is checked after the database (migrated) and Redis (connected) are open.
    const missing = path.join(db.dir, 'no-such-words.txt');
    const config = loadConfig({ ...env(), MODERATION_WORDS_FILE: missing, ...(redisUrl ? { REDIS_URL: redisUrl } : {}) });
    await expect(buildServices(config)).rejects.toThrow(`cannot start: content check: ENOENT: no such file or directory, open '${missing}'`);
    expect(await emptied(() => held(file, ports))).toEqual([]);
  });

  it('reports a port in use in one line, without a stack, and exits 1', async () => {
    db = await createTestDb(dialect);
    const taken: Server = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as { port: number }).port;
    try {
      const r = await gengate(['serve'], { ...env(), PORT: String(port) });
      expect(r.code).toBe(1);
      expect(r.stderr).toBe(`gengate: cannot start: 127.0.0.1:${port} is already in use by another process (set PORT to a free port)\n`);
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  }, 240_000);

  it('--role api starts without the credential of an upstream route; a worker, which calls it, refuses to', async () => {
    db = await createTestDb(dialect);
    const catalog = path.join(db.dir, 'catalog.json');
    writeFileSync(
      catalog,
      JSON.stringify({ models: { 'seedance-2.0': { routes: [{ backend: 'fal', model: 'fal-ai/seedance', key_env: 'FAL_KEY' }, { backend: 'local' }] } } }),
    );
    const settings = { ...env(), GENGATE_CATALOG: catalog, FAL_KEY: '' };
    const api = await spawnServe(settings, ['--role', 'api']);
    try {
      expect(api.output()).toMatch(/role: api/);
      expect((await fetch(`${api.url}/healthz`)).status).toBe(200);
      const models = (await (await fetch(`${api.url}/api/v1/models`)).json()) as { data: Array<{ id: string }> };
      expect(models.data.map((m) => m.id)).toContain('seedance-2.0');
    } finally {
      await stop(api.child);
    }
    const worker = await gengate(['serve', '--role', 'worker'], settings);
    expect(worker.code).toBe(2);
    expect(worker.stderr).toContain(`GENGATE_CATALOG ${catalog}: models."seedance-2.0".routes[0].key_env: the setting FAL_KEY is not set`);
  }, 240_000); // several runs of the real CLI or server, each a new process loading the sources: slow on a busy machine
});
