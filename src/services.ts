import type { Config } from './config.js';
import { openDatabase, type Database } from './store/db.js';
import { migrate } from './store/migrate.js';
import { Ledger } from './billing/index.js';
import { Accounts, Authenticator } from './accounts/index.js';
import { RateLimits } from './limits/index.js';
import { Redis } from 'ioredis';
import { systemClock, type Clock } from './clock.js';
import { loadCatalog, ModelSwitches, type Catalog } from './catalog/index.js';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { DiskBlobStore, Files, UploadFacts, Uploads, type BlobStore, type MediaFactsResolver } from './files/index.js';
import { LocalBackend, type Backend } from './backends/index.js';
import { buildRouteBackends, sweepUpstreamTmp } from './backends/registry.js';
import { BACKEND_KINDS_BUILT } from './backends/kinds.js';
import { UpstreamHttp } from './backends/upstream/index.js';
import { Engine, RouteHealth, Tasks, connectWakeups, type Wakeups } from './tasks/index.js';
import { registerRouteMetrics } from './tasks/route-metrics.js';
import { Metrics } from './metrics/index.js';
import { NetGuard } from './net/index.js';
import { CallbackWorker, callbackUrlCheck, retryDelays } from './callbacks/index.js';
import { buildModerator, contentCheck } from './moderation/index.js';

/** Everything the routes, the CLI and the engine use; built in one place from the settings. */
export interface Services {
  config: Config;
  clock: Clock;
  database: Database;
  ledger: Ledger;
  accounts: Accounts;
  auth: Authenticator;
  limits: RateLimits;
  /** Shared Redis connection when REDIS_URL is set (rate limits, wake-ups). */
  redis: Redis | null;
  catalog: Catalog;
  /** The operator's model switches (CLI / admin API); `catalog` reflects them. */
  models: ModelSwitches;
  files: Files;
  facts: MediaFactsResolver;
  /** POST /files/upload: receiving, checking and storing uploads. */
  uploads: Uploads;
  tasks: Tasks;
  /** The worker loop; `gengate serve` starts it (RUN_ENGINE), tests may start it or call tick(). */
  engine: Engine;
  /** Prometheus metrics of this process (/metrics). */
  metrics: Metrics;
  /** The network guard every outbound fetch goes through (DECISIONS §14). */
  guard: NetGuard;
  /** The callback delivery worker; `gengate serve` starts it next to the engine. */
  callbacks: CallbackWorker;
  /** Carries task signals between processes (Redis, else PostgreSQL LISTEN/NOTIFY, else none). */
  wakeups: Wakeups;
  /** Circuit breakers and concurrency slots of the catalog's routes (issue 8). */
  routeHealth: RouteHealth;
  close(): Promise<void>;
}

/** The one place that picks implementations (database dialect, clock, ...) and runs migrations. */
export async function buildServices(
  config: Config,
  /** `upstreams: false` leaves the catalog's upstream routes unbuilt (operator commands run no engine, so they need no provider credentials). */
  opts: { clock?: Clock; backends?: Record<string, Backend>; blobs?: BlobStore; upstreams?: boolean } = {},
): Promise<Services> {
  const clock = opts.clock ?? systemClock;
  const fileCatalog = loadCatalog(config); // before the database: a bad catalog file stops the start at once
  const database = openDatabase(config.DATABASE_URL, { prepared: config.DATABASE_PREPARED });
  try {
    await migrate(database);
  } catch (e) {
    await database.close();
    throw e;
  }
  const models = new ModelSwitches(database, fileCatalog, clock);
  await models.refresh();
  models.start(config.MODEL_SWITCH_CACHE_MS);
  const catalog = models.catalog;
  const ledger = new Ledger(clock);
  const auth = new Authenticator(database, clock, config.AUTH_CACHE_MS);
  const accounts = new Accounts(database, ledger, clock, () => auth.forget());
  // Without an offline queue a command fails at once while Redis is down, so the limiter's
  // in-memory stand-in answers instead of requests hanging.
  const redis = config.REDIS_URL ? new Redis(config.REDIS_URL, { enableOfflineQueue: false, maxRetriesPerRequest: 1 }) : null;
  redis?.on('error', () => {});
  if (redis) await waitReady(redis, 5_000);
  const limits = new RateLimits(config.RATE_LIMIT_WINDOW_SECONDS, redis ?? undefined);
  const blobs = opts.blobs ?? (await blobStore(config));
  const files = new Files(database, blobs, clock, config.PUBLIC_BASE_URL);
  const facts = new UploadFacts(database, clock, config.PUBLIC_BASE_URL);
  const uploads = new Uploads(database, files, clock, {
    imageBytes: config.UPLOAD_MAX_IMAGE_BYTES,
    mediaBytes: config.UPLOAD_MAX_MEDIA_BYTES,
    imagePixels: config.UPLOAD_MAX_IMAGE_PIXELS,
    tmpDir: path.join(config.DATA_DIR, 'tmp'),
  });
  void uploads.sweepTemp();
  const guard = new NetGuard({ allowPrivate: config.ALLOW_PRIVATE_NETWORK });
  const moderate = contentCheck(buildModerator(config, guard, files));
  const tasks = new Tasks(database, ledger, catalog, clock, facts, files, config, { checkUrl: callbackUrlCheck(guard), moderate });
  let routeBackends = new Map<string, Backend>();
  try {
    const tmpDir = path.join(config.DATA_DIR, 'upstream-tmp');
    mkdirSync(tmpDir, { recursive: true });
    void sweepUpstreamTmp(tmpDir, Date.now());
    const http = new UpstreamHttp(guard, { timeoutMs: Math.min(30_000, config.BACKEND_CALL_TIMEOUT_MS) });
    if (opts.upstreams !== false) routeBackends = buildRouteBackends(fileCatalog, { secrets: config.secrets, http, files, tmpDir, kinds: BACKEND_KINDS_BUILT }, config.GENGATE_CATALOG ? `GENGATE_CATALOG ${config.GENGATE_CATALOG}` : 'catalog');
  } catch (e) {
    models.stop();
    guard.close();
    redis?.disconnect();
    await database.close();
    throw e;
  }
  const routeHealth = new RouteHealth({ failures: config.ROUTE_BREAKER_FAILURES, cooldownMs: config.ROUTE_BREAKER_COOLDOWN_MS }, clock);
  const local = new LocalBackend(clock, {
    queueMs: config.LOCAL_QUEUE_MS,
    generateMs: config.LOCAL_GENERATE_MS,
    fail: config.LOCAL_FAIL,
    cacheDir: path.join(config.DATA_DIR, 'render-cache'),
  });
  const metrics = new Metrics(database, clock);
  const countSubmit = registerRouteMetrics(metrics.registry, routeHealth, fileCatalog, database);
  const engine = new Engine({
    database, ledger, catalog, clock, files, signals: tasks.signals,
    backends: new Map([...routeBackends, ...Object.entries({ local, ...opts.backends })]),
    health: routeHealth,
    countSubmit,
    webhookBase: config.UPSTREAM_WEBHOOKS ? config.PUBLIC_BASE_URL : null,
    settings: {
      pollMs: config.ENGINE_POLL_MS,
      leaseMs: config.ENGINE_LEASE_MS,
      maxAttempts: config.ENGINE_MAX_ATTEMPTS,
      retryMs: config.ENGINE_RETRY_MS,
      callTimeoutMs: config.BACKEND_CALL_TIMEOUT_MS,
      concurrency: config.ENGINE_CONCURRENCY,
      upstreamPollMs: config.UPSTREAM_POLL_MS,
    },
  });
  const wakeups = await connectWakeups(tasks.signals, { redis, databaseUrl: config.DATABASE_URL, database });
  const callbacks = new CallbackWorker({
    database, clock, guard, signals: tasks.signals,
    view: { usdRubRate: config.USD_RUB_RATE, fileUrl: (id, name) => files.url(id, name) },
    settings: {
      retryDelaysMs: retryDelays(config.CALLBACK_RETRY_DELAYS_MS),
      timeoutMs: config.CALLBACK_TIMEOUT_MS,
      concurrency: config.CALLBACK_CONCURRENCY,
      pollMs: config.ENGINE_POLL_MS,
    },
    count: (outcome) => metrics.callbackDeliveries.inc({ outcome }),
  });
  return {
    config,
    clock,
    database,
    ledger,
    accounts,
    auth,
    limits,
    redis,
    catalog,
    models,
    files,
    facts,
    uploads,
    tasks,
    engine,
    metrics,
    guard,
    callbacks,
    wakeups,
    routeHealth,
    close: async () => {
      await engine.stop();
      await callbacks.stop();
      await wakeups.close();
      if (!opts.blobs) blobs.close?.();
      guard.close();
      models.stop();
      await database.close();
      redis?.disconnect();
    },
  };
}

/** The blob store the settings ask for: S3 when S3_BUCKET is set, else files under DATA_DIR/files. */
async function blobStore(config: Config): Promise<BlobStore> {
  if (!config.S3_BUCKET) return new DiskBlobStore(path.join(config.DATA_DIR, 'files'));
  // Loaded only here: processes on the disk store never load the AWS SDK.
  const { S3BlobStore } = await import('./files/s3.js');
  return new S3BlobStore({
    bucket: config.S3_BUCKET,
    region: config.S3_REGION,
    endpoint: config.S3_ENDPOINT,
    accessKeyId: config.S3_ACCESS_KEY_ID,
    secretAccessKey: config.S3_SECRET_ACCESS_KEY,
    forcePathStyle: config.S3_FORCE_PATH_STYLE,
    // S3-compatible servers often reject the newer default checksums.
    checksums: config.S3_CHECKSUMS ?? (config.S3_ENDPOINT ? 'WHEN_REQUIRED' : 'WHEN_SUPPORTED'),
    prefix: config.S3_PREFIX,
  });
}

/** Waits for a Redis connection up to `ms`; carries on without it (the limiter covers for it). */
function waitReady(redis: Redis, ms: number): Promise<void> {
  if (redis.status === 'ready') return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      redis.off('ready', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    redis.once('ready', done);
  });
}
