import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { Redis } from 'ioredis';
import type { Config } from './config.js';
import { systemClock, type Clock } from './clock.js';
import { Opened, openCore, step, type Core } from './core.js';
import { RateLimits } from './limits/index.js';
import { privateRouteHosts, type Catalog } from './catalog/index.js';
import { DiskBlobStore, Files, loadS3BlobStore, UploadFacts, Uploads, type BlobStore, type MediaFactsResolver } from './files/index.js';
import { LocalBackend, loadUpstreams, type Backend } from './backends/index.js';
import { Engine, RouteHealth, connectWakeups, registerEngineMetrics, registerHeldGauge, taskDue, type Wakeups } from './engine/index.js';
import { Tasks, TaskSignals } from './tasks/index.js';
import { Metrics } from './metrics/index.js';
import { NetGuard } from './net/index.js';
import { configureMedia, setBinary } from './media/index.js';
import { CallbackWorker, Webhooks, callbackUrlCheck, retryDelays } from './callbacks/index.js';
import { Mailer } from './members/index.js';
import { buildContentCheck, type ContentCheck } from './moderation/index.js';
import { buildPayments, type Payments } from './payments/index.js';
import { OAuth } from './oauth/index.js';

export { StartError, type Core } from './core.js';

/** Everything the routes, the CLI and the engine use; built in one place from the settings. */
export interface Services extends Core {
  limits: RateLimits;
  /** Shared Redis connection when REDIS_URL is set (rate limits, wake-ups). */
  redis: Redis | null;
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
  /** The guard of upstream calls: `guard` plus the trusted upstream hosts (its `privateHosts`; decision 2502). */
  upstreamGuard: NetGuard;
  /** The callback delivery worker; `gengate serve` starts it next to the engine. */
  callbacks: CallbackWorker;
  /** Delivery logs, redelivery and test deliveries of the account webhooks (decision 1905). */
  webhooks: Webhooks;
  /** Carries task signals between processes (Redis, else PostgreSQL LISTEN/NOTIFY, else none). */
  wakeups: Wakeups;
  /** Circuit breakers and concurrency slots of the catalog's routes (issue 8). */
  routeHealth: RouteHealth;
  /** The content check of createTask and its image classifier pool (worker threads). */
  moderation: ContentCheck;
  /** Card top-ups through Stripe Checkout and the webhook that credits them (decision 1904). */
  payments: Payments;
  /** GenGate as the OAuth authorization server of its MCP endpoint (decision 2202). */
  oauth: OAuth;
}

/** What buildServices may be given instead of what the settings say (tests), and whether to build the upstream routes. */
export interface BuildOptions {
  clock?: Clock;
  backends?: Record<string, Backend>;
  blobs?: BlobStore;
  /** false leaves the catalog's upstream routes unbuilt: a process that runs no engine (`--role api`) needs no provider credentials. */
  upstreams?: boolean;
}

/**
 * The one place that picks implementations (database dialect, clock, ...) and runs migrations.
 * When a step fails half way, what was opened is closed again and the error names the step (StartError).
 */
export async function buildServices(config: Config, opts: BuildOptions = {}): Promise<Services> {
  const opened = new Opened();
  const runsTasks = opts.upstreams !== false && config.ROLE !== 'api' && config.RUN_ENGINE;
  const core = await openCore(config, opts.clock ?? systemClock, opened, runsTasks);
  try {
    return await assemble(core, opened, opts);
  } catch (e) {
    await opened.close().catch(() => {}); // the start's own error is the one worth reporting
    throw e;
  }
}

/** Builds the rest on the core, registering in `opened` everything that must be closed. */
async function assemble(core: Core, opened: Opened, opts: BuildOptions): Promise<Services> {
  const { config, clock, database, ledger, catalog, fileCatalog, models, secrets } = core;
  models.start(config.MODEL_SWITCH_CACHE_MS);
  // The stored definitions' generation is polled every MODEL_SWITCH_CACHE_MS of the injected clock; the timer only asks often.
  core.definitions.start(Math.max(50, Math.floor(config.MODEL_SWITCH_CACHE_MS / 4)));
  // Without an offline queue a command fails at once while Redis is down, so the limiter's
  // in-memory stand-in answers instead of requests hanging.
  const redis = config.REDIS_URL
    ? opened.add(new Redis(config.REDIS_URL, { enableOfflineQueue: false, maxRetriesPerRequest: 1 }), (r) => r.disconnect())
    : null;
  redis?.on('error', () => {});
  if (redis) await waitReady(redis, 5_000);
  const limits = new RateLimits(config.RATE_LIMIT_WINDOW_SECONDS, redis ?? undefined);
  const blobs = opts.blobs ?? opened.add(await step('file store', () => blobStore(config)), (b) => b.close());
  const files = new Files(database, blobs, clock, config.PUBLIC_BASE_URL, secrets);
  const facts = new UploadFacts(database, clock, config.PUBLIC_BASE_URL);
  const video = {
    maxSide: config.UPLOAD_MAX_VIDEO_SIDE,
    maxPixels: config.UPLOAD_MAX_VIDEO_PIXELS,
    maxFps: config.UPLOAD_MAX_VIDEO_FPS,
    maxFrames: config.UPLOAD_MAX_VIDEO_FRAMES,
  };
  configureMedia({ threads: config.MEDIA_THREADS, video });
  setBinary('ffmpeg', config.FFMPEG_PATH ?? null);
  setBinary('ffprobe', config.FFPROBE_PATH ?? null);
  const uploads = new Uploads(database, files, clock, {
    imageBytes: config.UPLOAD_MAX_IMAGE_BYTES,
    mediaBytes: config.UPLOAD_MAX_MEDIA_BYTES,
    imagePixels: config.UPLOAD_MAX_IMAGE_PIXELS,
    video,
    tmpDir: path.join(config.DATA_DIR, 'tmp'),
  });
  void uploads.sweepTemp();
  const guard = opened.add(new NetGuard({ allowPrivate: config.ALLOW_PRIVATE_NETWORK }), (g) => g.close());
  // Upstream calls may also reach the operator's trusted hosts on private addresses (decision 2502); customers' links use `guard`.
  const privateHosts = [...config.UPSTREAM_PRIVATE_HOSTS, ...privateRouteHosts(fileCatalog)];
  const upstreamGuard = opened.add(new NetGuard({ allowPrivate: config.ALLOW_PRIVATE_NETWORK, privateHosts }), (g) => g.close());
  // Its classifier's worker threads start with the first photo (decision 0305); closing stops them.
  const moderation = opened.add(await step('content check', () => buildContentCheck(config, guard, files, limits)), (m) => m.close());
  // The one set of in-process task signals: Tasks, the engine, wake-ups and callbacks share it.
  const signals = new TaskSignals();
  // A route that hears of a job's end on its own (a ComfyUI websocket) makes its task due at once, as
  // an upstream notice does.
  const due = (taskId: string) => void taskDue({ database, clock, signals }, taskId).catch(() => {});
  const routeBackends =
    opts.upstreams === false
      ? new Map<string, Backend>()
      : opened.add(
          await step('upstream routes', () => upstreamBackends(config, fileCatalog, { upstream: upstreamGuard, given: guard }, files, due)),
          closeBackends,
        );
  const local = new LocalBackend(clock, {
    queueMs: config.LOCAL_QUEUE_MS,
    generateMs: config.LOCAL_GENERATE_MS,
    fail: config.LOCAL_FAIL,
    cacheDir: path.join(config.DATA_DIR, 'render-cache'),
    recipe: (model) => catalog.find(model)?.demo,
  });
  const backends = new Map([...routeBackends, ...Object.entries({ local, ...opts.backends })]);
  // A process that runs no engine (`--role api`) builds the upstream routes only when a cancel needs one.
  let late: Promise<Map<string, Backend>> | null = null;
  const backendOf = async (route: string): Promise<Backend | undefined> => {
    if (backends.has(route) || opts.upstreams !== false) return backends.get(route);
    late ??= upstreamBackends(config, fileCatalog, { upstream: upstreamGuard, given: guard }, files, due).then((m) => opened.add(m, closeBackends));
    return (await late).get(route);
  };
  const tasks = new Tasks(
    database,
    ledger,
    catalog,
    clock,
    facts,
    files,
    config,
    signals,
    { checkUrl: callbackUrlCheck(guard), moderate: moderation.check },
    { backendOf, callTimeoutMs: config.BACKEND_CALL_TIMEOUT_MS },
  );
  const routeHealth = new RouteHealth({ failures: config.ROUTE_BREAKER_FAILURES, cooldownMs: config.ROUTE_BREAKER_COOLDOWN_MS }, clock, backends);
  const metrics = new Metrics(database, clock);
  const engineCounters = registerEngineMetrics(metrics.registry, routeHealth, fileCatalog, database);
  const engine = new Engine({
    database,
    ledger,
    catalog,
    clock,
    files,
    signals,
    backends,
    health: routeHealth,
    ...engineCounters,
    webhookBase: config.UPSTREAM_WEBHOOKS ? config.PUBLIC_BASE_URL : null,
    publicBase: config.PUBLIC_BASE_URL,
    settings: {
      pollMs: config.ENGINE_POLL_MS,
      leaseMs: config.ENGINE_LEASE_MS,
      maxAttempts: config.ENGINE_MAX_ATTEMPTS,
      retryMs: config.ENGINE_RETRY_MS,
      callTimeoutMs: config.BACKEND_CALL_TIMEOUT_MS,
      concurrency: config.ENGINE_CONCURRENCY,
      upstreamPollMs: config.UPSTREAM_POLL_MS,
      fallbackPollMs: config.UPSTREAM_FALLBACK_POLL_MS,
      inFlight: config.ENGINE_IN_FLIGHT,
    },
  });
  registerHeldGauge(metrics.registry, () => engine.held);
  const wakeups = opened.add(await step('wake-ups', () => connectWakeups(signals, { redis, databaseUrl: config.DATABASE_URL, database })), (w) => w.close());
  const deliveryDeps = {
    database,
    clock,
    guard,
    secrets,
    view: { usdRubRate: config.USD_RUB_RATE, fileUrl: (id: string, name: string) => files.url(id, name) },
    settings: {
      retryDelaysMs: retryDelays(config.CALLBACK_RETRY_DELAYS_MS),
      timeoutMs: config.CALLBACK_TIMEOUT_MS,
      concurrency: config.CALLBACK_CONCURRENCY,
      pollMs: config.ENGINE_POLL_MS,
    },
  };
  const callbacks = new CallbackWorker({
    ...deliveryDeps,
    signals,
    count: (outcome) => metrics.callbackDeliveries.inc({ outcome }),
    mailer: config.SMTP_URL ? new Mailer(config.SMTP_URL, config.MAIL_FROM) : null,
  });
  const webhooks = new Webhooks(deliveryDeps);
  // Registered last, so they stop first: nothing is started here, `gengate serve` (or a test) starts them.
  opened.add(callbacks, (c) => c.stop());
  opened.add(engine, (e) => e.stop());
  const payments = buildPayments(config, database, ledger, clock);
  if (payments.fees) opened.add(payments.fees, (f) => f.stop());
  const oauth = new OAuth(database, core.accounts, clock, {
    resource: `${config.PRICING_BASE_URL}/mcp`,
    issuer: config.PUBLIC_BASE_URL,
    accessTtlMs: config.OAUTH_ACCESS_TOKEN_SECONDS * 1000,
    refreshTtlMs: config.OAUTH_REFRESH_TOKEN_DAYS * 86_400_000,
  });
  return {
    ...core,
    limits,
    redis,
    files,
    facts,
    uploads,
    tasks,
    engine,
    metrics,
    guard,
    upstreamGuard,
    callbacks,
    webhooks,
    wakeups,
    routeHealth,
    moderation,
    payments,
    oauth,
  };
}

/** One Backend per upstream route of the catalog; loaded only by processes that run the engine. A missing credential is a ConfigError. */
async function upstreamBackends(
  config: Config,
  fileCatalog: Catalog,
  guards: { upstream: NetGuard; given: NetGuard },
  files: Files,
  due: (taskId: string) => void,
): Promise<Map<string, Backend>> {
  const { buildRouteBackends, sweepUpstreamTmp, BACKEND_KINDS_BUILT, UpstreamHttp } = await loadUpstreams();
  const tmpDir = path.join(config.DATA_DIR, 'upstream-tmp');
  mkdirSync(tmpDir, { recursive: true });
  void sweepUpstreamTmp(tmpDir, Date.now());
  const http = new UpstreamHttp(guards.upstream, { timeoutMs: Math.min(30_000, config.BACKEND_CALL_TIMEOUT_MS), givenGuard: guards.given });
  return buildRouteBackends(
    fileCatalog,
    {
      secrets: config.secrets,
      http,
      files,
      tmpDir,
      kinds: BACKEND_KINDS_BUILT,
      due,
      ...(config.GENGATE_CATALOG ? { baseDir: path.dirname(path.resolve(config.GENGATE_CATALOG)) } : {}),
    },
    config.GENGATE_CATALOG ? `GENGATE_CATALOG ${config.GENGATE_CATALOG}` : 'catalog',
  );
}

/** Closes what the route backends hold open (a ComfyUI route's websockets); one that fails to close does not stop the shutdown. */
async function closeBackends(backends: Map<string, Backend>): Promise<void> {
  await Promise.allSettled([...backends.values()].map((b) => b.close?.()));
}

/** The blob store the settings ask for: S3 when S3_BUCKET is set (under `prefix`, S3_PREFIX by default), else files under DATA_DIR/files. */
export async function blobStore(config: Config, prefix = config.S3_PREFIX): Promise<BlobStore> {
  if (!config.S3_BUCKET) return new DiskBlobStore(path.join(config.DATA_DIR, 'files'));
  // Loaded only here: processes on the disk store never load the AWS SDK.
  const S3BlobStore = await loadS3BlobStore();
  return new S3BlobStore({
    bucket: config.S3_BUCKET,
    region: config.S3_REGION,
    endpoint: config.S3_ENDPOINT,
    accessKeyId: config.S3_ACCESS_KEY_ID,
    secretAccessKey: config.S3_SECRET_ACCESS_KEY,
    forcePathStyle: config.S3_FORCE_PATH_STYLE,
    // S3-compatible servers often reject the newer default checksums.
    checksums: config.S3_CHECKSUMS ?? (config.S3_ENDPOINT ? 'WHEN_REQUIRED' : 'WHEN_SUPPORTED'),
    prefix,
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
