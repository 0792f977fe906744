import { Redis } from 'ioredis';
import { ConfigError, loadConfig, type Config } from '../config.js';
import { loadCatalog, type Catalog } from '../catalog/index.js';
import type { BlobStore } from '../files/index.js';
import { checkToolchain, describeToolchain, setBinary } from '../media/index.js';
import { openDatabase } from '../store/index.js';
import { checkDatabase, checkPermissions, checkRoutes, databaseSkew, skewLine, type Check } from './checks.js';

/** What the doctor is given besides the environment: other processes to compare clocks with, and the parts the CLI loads on demand. */
export interface DoctorOptions {
  /** Base URLs of other GenGate processes (their /healthz answers carry a Date header). */
  peers: string[];
  /** The configured file store (services.ts blobStore). */
  blobs(config: Config): Promise<BlobStore>;
  /** The default base URL of each upstream kind (backends' BACKEND_KINDS_BUILT). */
  routeDefaults(): Promise<Readonly<Record<string, string>>>;
}

const reason = (e: unknown) => (e instanceof Error ? e.message : String(e)).split('\n')[0]!.slice(0, 300);

/** Runs one group of checks; a throw becomes one failed line with the fix given. */
async function guarded(name: string, fix: string, fn: () => Promise<Check[]>): Promise<Check[]> {
  try {
    return await fn();
  } catch (e) {
    return [{ name, status: 'fail', detail: reason(e), fix }];
  }
}

/**
 * `gengate doctor` (decision 2604): configuration, database and migrations, Redis, the file store,
 * ffmpeg and ffprobe, each upstream route, clocks, permissions. Reads and asks; changes nothing
 * (no migration, no file written).
 */
export async function runDoctor(env: NodeJS.ProcessEnv, opts: DoctorOptions): Promise<Check[]> {
  let config: Config;
  try {
    config = loadConfig(env);
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    return [
      {
        name: 'configuration',
        status: 'fail',
        detail: e.message.replace(/\n\s*/g, '; '),
        fix: 'correct the settings named (README, Configuration); nothing else is checked until they parse',
      },
    ];
  }
  const out: Check[] = [{ name: 'configuration', status: 'ok', detail: `settings parse (role ${config.ROLE}, database ${config.DATABASE_URL.split(':')[0]})` }];
  let catalog: Catalog | null = null;
  try {
    catalog = loadCatalog(config);
    out.push({ name: 'catalog', status: 'ok', detail: `${catalog.models.length} models${config.GENGATE_CATALOG ? ` (${config.GENGATE_CATALOG})` : ''}` });
  } catch (e) {
    out.push({ name: 'catalog', status: 'fail', detail: reason(e), fix: 'correct GENGATE_CATALOG (docs/backends.md)' });
  }
  out.push(
    ...(await guarded('database', 'check DATABASE_URL and that the database server runs and lets this user in', async () => {
      const database = openDatabase(config.DATABASE_URL, { guards: false, prepared: config.DATABASE_PREPARED });
      try {
        const lines = await checkDatabase(database);
        const skew = await databaseSkew(database);
        return skew === null ? lines : [...lines, skewLine('clock: database', skew)];
      } finally {
        await database.close();
      }
    })),
  );
  out.push(...(await redisChecks(config)));
  out.push(
    ...(await guarded(
      config.S3_BUCKET ? 'bucket' : 'files',
      config.S3_BUCKET ? 'check S3_ENDPOINT, S3_BUCKET and the keys (docs/scaling.md)' : 'make DATA_DIR writable by GenGate',
      async () => {
        const store = await opts.blobs(config);
        try {
          if (store.ping) await store.ping();
          else await store.size('doctor-probe');
          return [
            {
              name: config.S3_BUCKET ? 'bucket' : 'files',
              status: 'ok',
              detail: config.S3_BUCKET ? `s3 ${config.S3_BUCKET} answers` : `disk ${config.DATA_DIR}/files`,
            },
          ];
        } finally {
          store.close();
        }
      },
    )),
  );
  out.push(...(await mediaChecks(config)));
  if (catalog) {
    const found = catalog;
    out.push(...(await guarded('routes', 'correct GENGATE_CATALOG (docs/backends.md)', async () => checkRoutes(config, found, await opts.routeDefaults()))));
  }
  for (const peer of opts.peers) out.push(...(await guarded(`clock: ${peer}`, 'check the address and that the process runs', () => peerSkew(peer))));
  out.push(...(await checkPermissions(config, env)));
  return out;
}

/** Redis answers, and its clock against this machine's. */
async function redisChecks(config: Config): Promise<Check[]> {
  if (!config.REDIS_URL)
    return [{ name: 'redis', status: 'skip', detail: 'REDIS_URL not set: rate limits count per process, wake-ups go through the database' }];
  const redis = new Redis(config.REDIS_URL, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: 3_000,
    retryStrategy: () => null,
  });
  redis.on('error', () => {});
  return guarded('redis', 'check REDIS_URL and that Redis runs (GenGate carries on without it, per process)', async () => {
    try {
      await redis.connect();
      await redis.ping();
      const before = Date.now();
      const [seconds, micros] = await redis.time();
      const skew = Number(seconds) * 1000 + Number(micros) / 1000 - (before + Date.now()) / 2;
      return [{ name: 'redis', status: 'ok', detail: 'answers' }, skewLine('clock: redis', skew)];
    } finally {
      redis.disconnect();
    }
  });
}

/** ffmpeg and ffprobe run (the binaries the server would use). */
async function mediaChecks(config: Config): Promise<Check[]> {
  setBinary('ffmpeg', config.FFMPEG_PATH ?? null);
  setBinary('ffprobe', config.FFPROBE_PATH ?? null);
  return guarded('ffmpeg and ffprobe', 'install ffmpeg or set FFMPEG_PATH and FFPROBE_PATH (docs/operations.md, Media tools)', async () => {
    const tools = await describeToolchain();
    await checkToolchain();
    return (['ffmpeg', 'ffprobe'] as const).map((t) => ({
      name: t,
      status: 'ok' as const,
      detail: `${tools[t].path} (${tools[t].source}, version ${tools[t].version})`,
    }));
  });
}

/** Another process's clock, from the Date header of its /healthz (whole seconds: ±1 s plus half the round trip). */
async function peerSkew(peer: string): Promise<Check[]> {
  const before = Date.now();
  const res = await fetch(`${peer.replace(/\/+$/, '')}/healthz`, { signal: AbortSignal.timeout(5_000) });
  const after = Date.now();
  const date = Date.parse(res.headers.get('date') ?? '');
  if (!res.ok || Number.isNaN(date))
    return [
      {
        name: `clock: ${peer}`,
        status: 'fail',
        detail: `/healthz answered ${res.status} without a usable Date header`,
        fix: 'point --peer at a GenGate process',
      },
    ];
  // The header is cut to the second: compare with the middle of that second.
  const skew = date + 500 - (before + after) / 2;
  const line = skewLine(`clock: ${peer}`, Math.abs(skew) <= 500 + (after - before) / 2 ? 0 : skew);
  return [{ ...line, detail: `${line.detail} (to within 1 s)` }];
}
