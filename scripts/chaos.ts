/**
 * `npm run chaos`: the abuse test of issue 17 as a command. Needs PostgreSQL and Redis. Its
 * ports and database are settings, so it runs beside other services on a shared machine:
 * - CHAOS_DATABASE_URL (or TEST_DATABASE_URL): the PostgreSQL server; the run creates the database
 *   CHAOS_DATABASE_NAME there (default gengate_chaos), refuses to start if it exists already (it is
 *   never someone else's to drop), and drops it after;
 * - CHAOS_REDIS_URL (or TEST_REDIS_URL);
 * - CHAOS_PORT_BASE (default 18400): API process i listens on base + i, worker j on
 *   base + CHAOS_APIS + j, the callback receiver on base + CHAOS_APIS + CHAOS_WORKERS.
 * Exits 1 when any promise was broken.
 */
import pg from 'pg';
import { formatReport, runChaos } from '../test/chaos/run-chaos.js';

const env = process.env;
const number = (name: string, fallback: number) => {
  const v = env[name] === undefined ? fallback : Number(env[name]);
  if (!Number.isInteger(v) || v < 0) throw new Error(`${name} must be a whole number (got ${env[name]})`);
  return v;
};
const serverUrl = env.CHAOS_DATABASE_URL ?? env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const redisUrl = env.CHAOS_REDIS_URL ?? env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const name = env.CHAOS_DATABASE_NAME ?? 'gengate_chaos';
if (!/^[a-z_][a-z0-9_]{0,62}$/.test(name)) throw new Error(`CHAOS_DATABASE_NAME must be a PostgreSQL name of a-z, 0-9 and _ (got ${JSON.stringify(name)})`);
const portBase = number('CHAOS_PORT_BASE', 18_400);
const apis = number('CHAOS_APIS', 2);
const workers = number('CHAOS_WORKERS', 3);
if (portBase < 1024 || portBase + apis + workers > 65_535)
  throw new Error(`CHAOS_PORT_BASE must leave room for ${apis + workers + 1} ports from 1024 to 65535 (got ${portBase})`);

const admin = async (query: string) => {
  const c = new pg.Client({ connectionString: serverUrl });
  await c.connect();
  try {
    return await c.query(query);
  } finally {
    await c.end();
  }
};
if ((await admin(`select 1 from pg_database where datname = '${name}'`)).rowCount) {
  throw new Error(`the database ${name} exists already: drop it, or set CHAOS_DATABASE_NAME to a new name (the run creates and drops its own)`);
}
await admin(`create database ${name}`);
const databaseUrl = new URL(serverUrl);
databaseUrl.pathname = `/${name}`;
try {
  const report = await runChaos({
    databaseUrl: databaseUrl.toString(),
    redisUrl,
    tasks: number('CHAOS_TASKS', 2_000),
    apis,
    workers,
    kills: number('CHAOS_KILLS', 12),
    seed: number('CHAOS_SEED', Date.now() % 1_000_000),
    drainMs: number('CHAOS_DRAIN_MS', 180_000),
    portBase,
    log: (line) => console.log(`${line} (database ${name}, ports ${portBase} to ${portBase + apis + workers})`),
  });
  console.log(formatReport(report));
  process.exitCode = report.problems === 0 ? 0 : 1;
} finally {
  await admin(`drop database if exists ${name} with (force)`);
}
