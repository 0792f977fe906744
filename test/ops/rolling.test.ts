import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { buildServices, type Services } from '../../src/services.js';
import { createTestDb, dialects, type TestDb } from '../helpers/db.js';
import { startReceiver } from '../callbacks/receiver.js';
import { eventually } from '../tasks/support.js';
import { expectNothingLost, startLoad, startMember, stopMember, type Member } from './fleet.js';

/**
 * A rolling restart (decision 2602): two API processes and two workers, each stopped with SIGTERM
 * and replaced in turn while tasks are created, worked and their callbacks delivered. No answer is
 * a 5xx, every stop exits 0 within its grace time, and nothing is lost or charged twice. On SQLite
 * the four processes share one database file on one machine; on PostgreSQL, with Redis when set.
 * Slower than 30 s (decision 2602): it starts eight processes from the TypeScript sources, about
 * 2.5 s of CPU each, and needs each restart to happen under load.
 */
const ROOT = process.cwd();

for (const dialect of dialects()) {
  describe(`a rolling restart of 2 API processes and 2 workers under load (${dialect})`, () => {
    let db: TestDb;
    let services: Services | undefined;
    const members: Member[] = [];
    const closers: Array<() => Promise<unknown>> = [];
    let load: ReturnType<typeof startLoad> | undefined;
    afterEach(async () => {
      await load?.stop().catch(() => {});
      load = undefined;
      for (const m of members.splice(0)) await stopMember(m, 'SIGKILL');
      for (const c of closers.splice(0)) await c();
      await services?.close();
      await db?.drop();
    });

    it('answers no 5xx and loses nothing', async () => {
      db = await createTestDb(dialect);
      // Callbacks take a moment to answer, so deliveries are in flight when a worker is stopped.
      const receiver = await startReceiver(() => 200);
      closers.push(receiver.close);
      const shared = mkdtempSync(path.join(tmpdir(), 'gengate-roll-'));
      closers.push(async () => rmSync(shared, { recursive: true, force: true }));
      const env = {
        // On SQLite the processes share the data folder (database and files); on PostgreSQL too, for the files.
        DATA_DIR: shared,
        DATABASE_URL: db.url,
        ...(dialect === 'postgres' && process.env.TEST_REDIS_URL ? { REDIS_URL: process.env.TEST_REDIS_URL } : {}),
        GENGATE_SECRET_KEY: 'rolling-test-secret-key-0123456789abcdef',
        FIRST_RUN_ACCOUNT: 'false',
        LOCAL_QUEUE_MS: '50',
        LOCAL_GENERATE_MS: '200',
        ENGINE_POLL_MS: '100',
        ENGINE_LEASE_MS: '3000',
        ENGINE_RETRY_MS: '50',
        ENGINE_CONCURRENCY: '8',
        CALLBACK_RETRY_DELAYS_MS: '100,200,400',
        SHUTDOWN_GRACE_MS: '8000',
        ALLOW_PRIVATE_NETWORK: 'true',
        MODERATION_IMAGES: 'off',
      };
      services = await buildServices(loadConfig({ ...env, LOG_LEVEL: 'silent' }), { upstreams: false });
      const keys = await Promise.all([0, 1, 2].map(async (i) => (await services!.accounts.create(`roll-${i}`, 50_000_000)).apiKey));
      const start = async (role: 'api' | 'worker') => {
        const m = await startMember(ROOT, role, env);
        members.push(m);
        return m;
      };
      const [a0, a1, w0, w1] = await Promise.all([start('api'), start('api'), start('worker'), start('worker')]);
      const apis = [a0!, a1!];
      const workers = [w0!, w1!];
      const urls = apis.map((a) => a.url);
      load = startLoad(urls, keys, receiver.url);
      const accepted = () => load!.report.accepted.size;
      await eventually(() => accepted() >= 20, 30_000, '20 tasks accepted before the restarts');

      // Each process in turn, as a Deployment's rolling update does it (one more first): its
      // replacement starts, the proxy sends to it, then the old one gets SIGTERM and exits (0,
      // within its grace time) while requests, steps and deliveries are under way.
      const exits: Array<number | null> = [];
      for (const [i, old] of [...apis.entries(), ...workers.entries()]) {
        const before = accepted();
        const fresh = await start(old.role);
        if (old.role === 'api') urls.push(fresh.url);
        exits.push(await stopMember(old));
        if (old.role === 'api') urls.splice(urls.indexOf(old.url), 1);
        await eventually(() => accepted() >= before + 5, 30_000, `tasks accepted after restarting ${old.role} ${i}`);
      }
      const report = await load.stop();
      load = undefined;
      expect(exits).toEqual([0, 0, 0, 0]);
      expect(report.statuses.filter((s) => s >= 500)).toEqual([]);
      expect(report.accepted.size).toBeGreaterThanOrEqual(50);
      await expectNothingLost(services, report.accepted);
      process.stderr.write(`rolling restart (${dialect}): ${report.accepted.size} tasks, ${report.retried} requests sent again to the other API process\n`);
    }, 180_000);
  });
}
