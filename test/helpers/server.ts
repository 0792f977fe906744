import { createServer } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { loadConfig, type Config } from '../../src/config.js';
import { buildServices, type Services } from '../../src/services.js';
import { buildApp } from '../../src/http/app.js';
import { MICROS_PER_USD } from '../../src/billing/index.js';
import { createTestDb, type TestDb } from './db.js';

/** Tests that are not about rate limits must not trip them; the limit tests set their own. */
export const UNLIMITED = { RATE_LIMIT_WRITE: '1000000', RATE_LIMIT_READ: '1000000', RATE_LIMIT_PUBLIC: '1000000' };

/** A running GenGate on a loopback port over a fresh database, with helpers to call it. */
export interface TestServer {
  url: string;
  db: TestDb;
  config: Config;
  services: Services;
  app: FastifyInstance;
  /** Creates an account with `usd` balance; returns its id and first key. */
  account(usd?: number, name?: string): Promise<{ id: string; key: string }>;
  /** fetch against the server, JSON-decoded. */
  call(
    method: string,
    path: string,
    opts?: { key?: string; body?: unknown; headers?: Record<string, string> },
  ): Promise<{ status: number; body: any; headers: Headers }>;
  close(): Promise<void>;
}

/** Starts the real app on 127.0.0.1 (port `env.PORT`, else any free one) over a new database of `dialect`; `env` adds settings. */
export async function startServer(
  dialect: 'sqlite' | 'postgres',
  env: Record<string, string> = {},
  before?: (app: FastifyInstance, services: Services) => void,
  opts: Parameters<typeof buildServices>[1] = {},
): Promise<TestServer> {
  const db = await createTestDb(dialect);
  const config = loadConfig({ DATA_DIR: db.dir, DATABASE_URL: db.url, LOG_LEVEL: 'silent', PORT: '0', ...UNLIMITED, ...env });
  const services = await buildServices(config, opts);
  const app = buildApp(services);
  before?.(app, services);
  // A test that needs real links (PUBLIC_BASE_URL naming the real port, e.g. a browser showing results) passes PORT.
  await app.listen({ port: Number(env.PORT ?? 0), host: '127.0.0.1' });
  const address = app.server.address();
  const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  return {
    url,
    db,
    config,
    services,
    app,
    account: async (usd = 10, name = 'test') => {
      const r = await services.accounts.create(name, Math.round(usd * MICROS_PER_USD));
      return { id: r.account.id, key: r.apiKey };
    },
    call: async (method, path, opts = {}) => {
      const headers: Record<string, string> = { ...opts.headers };
      if (opts.key) headers.authorization = `Bearer ${opts.key}`;
      let body: string | undefined;
      if (opts.body !== undefined) {
        body = typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
        headers['content-type'] ??= 'application/json';
      }
      const res = await fetch(url + path, { method, headers, body });
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {
        /* not JSON: keep the text */
      }
      return { status: res.status, body: parsed, headers: res.headers };
    },
    close: async () => {
      await app.close();
      await services.close();
      await db.drop();
    },
  };
}

/** A free loopback port, for a server whose links (PUBLIC_BASE_URL) must name the port it listens on. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

/**
 * startServer on a port picked first, so its links (PUBLIC_BASE_URL, by default http://127.0.0.1:PORT)
 * reach it; another process may take the port in between, so a taken one is tried again, twice.
 */
export async function startServerOnFreePort(
  dialect: 'sqlite' | 'postgres',
  env: Record<string, string> = {},
  before?: (app: FastifyInstance, services: Services) => void,
  opts: Parameters<typeof buildServices>[1] = {},
): Promise<TestServer> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startServer(dialect, { ...env, PORT: String(await freePort()) }, before, opts);
    } catch (e) {
      if ((e as { code?: string }).code !== 'EADDRINUSE' || attempt === 3) throw e;
    }
  }
}
