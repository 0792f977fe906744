import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { MediaError, checkToolchain } from '../../media/index.js';
import type { Services } from '../../services.js';

/** Longest wait for one readiness check; a hung database must answer 503, not hang the probe. */
const CHECK_TIMEOUT_MS = 2_000;
/** Blob key looked up by the readiness check; it never exists, the point is that the store answers. */
const PROBE_KEY = 'readyz-probe';

/** Resolves to 'ok' or the reason, within CHECK_TIMEOUT_MS. */
async function check(run: () => Promise<unknown>): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve(`no answer within ${CHECK_TIMEOUT_MS} ms`), CHECK_TIMEOUT_MS);
  });
  try {
    return await Promise.race([run().then(() => 'ok'), timeout]);
  } catch (e) {
    return `error: ${(e as Error).message}`;
  } finally {
    clearTimeout(timer);
  }
}

const digest = (s: string) => createHash('sha256').update(s).digest();

/**
 * The operations surface (docs/operations.md): /healthz (process up), /readyz (database and blob
 * store answer, ffmpeg and ffprobe run), /metrics (Prometheus; bearer METRICS_TOKEN when set). The per-request metric is
 * recorded by the request log in app.ts.
 */
export function registerOpsRoutes(app: FastifyInstance, services: Services) {
  const { metrics, database, files, config } = services;
  app.get('/healthz', async (_req, reply) => reply.header('cache-control', 'no-store').send({ status: 'ok' }));

  // The tools' own words name server paths: they go to the log, the answer names only the tool.
  const toolchain = () =>
    checkToolchain().catch((e: unknown) => {
      app.log.error({ err: e }, 'media toolchain check failed');
      const tool = e instanceof MediaError ? e.op.split(' ')[0] : 'ffmpeg or ffprobe';
      throw new Error(`${tool} does not run (the server log says why)`);
    });

  app.get('/readyz', async (_req, reply) => {
    const [db, blobs, media] = await Promise.all([
      check(() => sql`select 1`.execute(database.db)),
      check(() => (files.blobs.ping ? files.blobs.ping() : files.blobs.size(PROBE_KEY))),
      check(toolchain),
    ]);
    const ready = db === 'ok' && blobs === 'ok' && media === 'ok';
    return reply
      .code(ready ? 200 : 503)
      .header('cache-control', 'no-store')
      .send({ status: ready ? 'ok' : 'unavailable', checks: { database: db, blobs, media } });
  });

  const expected = config.METRICS_TOKEN ? digest(`Bearer ${config.METRICS_TOKEN}`) : null;
  app.get('/metrics', async (req, reply) => {
    if (expected) {
      const given = req.headers.authorization;
      if (!given || !timingSafeEqual(digest(given), expected)) {
        return reply.code(401).header('www-authenticate', 'Bearer').send({ status: 'unauthorized', msg: 'send Authorization: Bearer <METRICS_TOKEN>' });
      }
    }
    const text = await metrics.render();
    return reply.header('content-type', metrics.contentType).header('cache-control', 'no-store').send(text);
  });
}
