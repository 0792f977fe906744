/**
 * `npm run chaos`: the abuse test of issue 17 as a command. Needs PostgreSQL and Redis:
 * CHAOS_DATABASE_URL (or TEST_DATABASE_URL; a scratch database is created there and dropped after)
 * and CHAOS_REDIS_URL (or TEST_REDIS_URL). Exits 1 when any promise was broken.
 */
const env = process.env;
const number = (name: string, fallback: number) => {
  const v = env[name] === undefined ? fallback : Number(env[name]);
  if (!Number.isInteger(v) || v < 0) throw new Error(`${name} must be a whole number (got ${env[name]})`);
  return v;
};
env.TEST_DATABASE_URL = env.CHAOS_DATABASE_URL ?? env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const redisUrl = env.CHAOS_REDIS_URL ?? env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
// Imported after TEST_DATABASE_URL is set: the helper reads it when loaded.
const { createTestDb } = await import('../test/helpers/db.js');
const { formatReport, runChaos } = await import('../test/chaos/run-chaos.js');
const db = await createTestDb('postgres');
try {
  const report = await runChaos({
    databaseUrl: db.url,
    redisUrl,
    tasks: number('CHAOS_TASKS', 2_000),
    apis: number('CHAOS_APIS', 2),
    workers: number('CHAOS_WORKERS', 3),
    kills: number('CHAOS_KILLS', 12),
    seed: number('CHAOS_SEED', Date.now() % 1_000_000),
    drainMs: number('CHAOS_DRAIN_MS', 180_000),
    log: (line) => console.log(line),
  });
  console.log(formatReport(report));
  process.exitCode = report.problems === 0 ? 0 : 1;
} finally {
  await db.drop();
}
