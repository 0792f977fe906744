import type { FastifyInstance } from 'fastify';
import type { Config } from '../config.js';
import { buildServices } from '../services.js';
import { step, StartError } from '../core.js';
import { buildApp } from '../http/index.js';
import { checkToolchain, describeToolchain } from '../media/index.js';
import { firstRun } from './first-run.js';
import { tuneHeap } from './heap.js';
import { startTracing } from '../tracing/index.js';
import { privateNetworkNotice } from '../net/index.js';

/**
 * `gengate serve`: migrations, first-run account, HTTP; stops cleanly on SIGINT/SIGTERM. ROLE
 * (or --role) splits the work (docs/scaling.md): api serves the API and holds no task state;
 * worker runs the engine, callbacks, expiry sweep and the retry of Stripe's fees, with only /healthz, /readyz and /metrics on
 * its port; all does both. RUN_ENGINE=false turns all into api. A start that fails half way closes
 * what it opened before the error is reported.
 */
export async function serve(config: Config): Promise<void> {
  // Uploads on a server that has been busy would otherwise run a full collection every 20-30 MB (decision 0317).
  tuneHeap();
  const api = config.ROLE !== 'worker';
  const work = config.ROLE !== 'api' && config.RUN_ENGINE;
  const role = api && work ? 'all' : api ? 'api' : 'worker';
  // Before the services and the app: they hook into tracing as they are built (off: nothing is loaded).
  const traces = await step('tracing', () => startTracing(config, role));
  // Only a process that runs the engine calls upstreams: an api process needs no provider credentials.
  const services = await buildServices(config, { upstreams: work }).catch(async (e: unknown) => {
    await traces?.shutdown();
    throw e;
  });
  let app: FastifyInstance | undefined;
  try {
    if (api && config.FIRST_RUN_ACCOUNT) await step('first-run account', () => firstRun(services, (line) => process.stdout.write(`${line}\n`)));
    app = buildApp(services, { routes: api ? 'all' : 'ops' });
    await listen(app, config);
  } catch (e) {
    await app?.close().catch(() => {});
    await services.close().catch(() => {});
    await traces?.shutdown();
    throw e;
  }
  if (services.database.dialect === 'postgres' && !config.GENGATE_SECRET_KEY) {
    app.log.warn(
      `GENGATE_SECRET_KEY is not set: stored secrets are sealed with the key file in ${config.DATA_DIR}; with several processes set the same GENGATE_SECRET_KEY on every one (docs/operations.md)`,
    );
  }
  // Decision 2502: say what private addresses this process may reach.
  const privateNotice = privateNetworkNotice(config.ALLOW_PRIVATE_NETWORK, [...services.upstreamGuard.privateHosts]);
  if (privateNotice) app.log[privateNotice.level](privateNotice.msg);
  if (work) services.engine.start(app.log);
  if (work) services.callbacks.start(app.log);
  services.payments.fees?.logTo(app.log);
  if (work) services.payments.fees?.start();
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.PORT;
  process.stdout.write(
    `GenGate ${role === 'worker' ? 'worker (health and metrics only) ' : ''}listening on http://${config.HOST}:${port} ` +
      `(role: ${role}, database: ${services.database.dialect}, files: ${config.S3_BUCKET ? `s3 ${config.S3_BUCKET}` : 'disk'}, wake-ups: ${services.wakeups.kind}, data: ${config.DATA_DIR})\n`,
  );
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    app.log.info({ signal }, 'stopping');
    // Decision 2602, all at once: no new connections, and requests in flight (also those arriving
    // on open connections) get SHUTDOWN_GRACE_MS before what is left is closed (src/http/drain.ts);
    // the engine and the callback worker stop claiming, their steps and deliveries in flight get
    // the same grace, and the tasks the engine holds are handed back. What still runs then is left
    // to its lease (fenced, decision 0014). Then the rest closes newest first, the database (its
    // statements finalized) last, queued spans are sent, and exit. The exit code says whether all
    // of it closed: 0 for a clean stop, 1 (with the error logged) when something did not (decision 2401).
    const grace = config.SHUTDOWN_GRACE_MS;
    let code = 0;
    const attempt = async (what: string, close: () => unknown): Promise<void> => {
      try {
        await close();
      } catch (err) {
        app.log.error({ err }, `stopping: closing ${what} failed`);
        code = 1;
      }
    };
    await Promise.all([
      attempt('the HTTP server', () => app.close()),
      work ? attempt('the engine', () => services.engine.stop(grace)) : null,
      work ? attempt('the callback worker', () => services.callbacks.stop(grace)) : null,
      attempt('the fee retries', () => services.payments.fees?.stop()),
    ]);
    const left = services.engine.busy + services.callbacks.busy;
    if (left > 0)
      app.log.warn(
        { steps: services.engine.busy, deliveries: services.callbacks.busy, graceMs: grace },
        'stopping: work still running after the grace time is left to its leases',
      );
    await attempt('the services', () => services.close());
    await attempt('the trace exporter', () => traces?.shutdown());
    process.exit(code);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
  // After the handlers: a stop during the toolchain check (it runs ffmpeg) is a graceful one too.
  process.stdout.write(`${await toolchainLine()}\n`);
}

/** Listens on HOST:PORT; the usual reasons it cannot are a StartError saying which setting to change. */
async function listen(app: FastifyInstance, config: Config): Promise<void> {
  try {
    await app.listen({ port: config.PORT, host: config.HOST });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const at = `${config.HOST}:${config.PORT}`;
    const why =
      code === 'EADDRINUSE'
        ? `${at} is already in use by another process (set PORT to a free port)`
        : code === 'EACCES'
          ? `no permission to listen on ${at} (ports below 1024 need privileges; set PORT)`
          : code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND'
            ? `HOST ${config.HOST} is not an address of this machine (set HOST, e.g. 127.0.0.1 or 0.0.0.0)`
            : `cannot listen on ${at}: ${(e as Error).message}`;
    throw new StartError(`cannot start: ${why}`, { cause: e });
  }
}

/** Which ffmpeg and ffprobe this server runs (path, how found, version), checked on a tiny input; a broken toolchain is said, not fatal (/readyz answers 503). */
async function toolchainLine(): Promise<string> {
  try {
    const tools = await describeToolchain();
    await checkToolchain();
    const shown = (t: (typeof tools)['ffmpeg']) => `${t.path} (${t.source}, version ${t.version})`;
    return `media: ffmpeg ${shown(tools.ffmpeg)}, ffprobe ${shown(tools.ffprobe)}`;
  } catch (e) {
    return `media: WARNING, ffmpeg/ffprobe do not run, uploads and renders will fail: ${(e as Error).message}`;
  }
}
