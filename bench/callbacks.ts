// Callback delivery throughput: N finished tasks' callbacks to a local receiver (issue 6 target: >= 1,000/s).
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig } from '../src/config.js';
import { buildServices } from '../src/services.js';

/** Delivers `n` due callbacks (SQLite, a keep-alive receiver on loopback) and reports deliveries per second. */
export async function benchCallbacks(n = Number(process.env.BENCH_CALLBACKS ?? 5_000)) {
  const dir = mkdtempSync(path.join(tmpdir(), 'gengate-bench-cb-'));
  let received = 0;
  const receiver = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received++;
      res.end('ok');
    });
  });
  await new Promise<void>((ok) => receiver.listen(0, '127.0.0.1', ok));
  const port = (receiver.address() as { port: number }).port;
  const config = loadConfig({
    DATA_DIR: dir,
    LOG_LEVEL: 'silent',
    ALLOW_PRIVATE_NETWORK: 'true',
    FIRST_RUN_ACCOUNT: 'false',
    MODERATION_IMAGES: 'off',
    CALLBACK_CONCURRENCY: process.env.BENCH_CALLBACK_CONCURRENCY ?? '64',
  });
  const s = await buildServices(config);
  try {
    const { account } = await s.accounts.create('bench', 0);
    const now = Date.now();
    await s.database.tx(async (trx) => {
      for (let i = 0; i < n; i++) {
        const id = `tk_bench${i}`;
        await trx
          .insertInto('tasks')
          .values({
            id,
            account_id: account.id,
            model: s.catalog.models[0]!.id,
            state: 'fail',
            param: '{}',
            input: '{}',
            callback_url: `http://127.0.0.1:${port}/hook`,
            price_micros: 0,
            final_micros: 0,
            auto_length: 0,
            is_draft: 0,
            progress: 0,
            fail_code: 501,
            fail_type: 'server_error',
            fail_msg: 'bench',
            refunded: 1,
            files_expired: 0,
            backend: 'local',
            run_at: now,
            deadline_at: now,
            attempts: 0,
            created_at: now,
            updated_at: now,
            completed_at: now,
          })
          .execute();
        await trx
          .insertInto('callbacks')
          .values({ task_id: id, url: `http://127.0.0.1:${port}/hook`, status: 'pending', attempts: 0, due_at: now, created_at: now })
          .execute();
      }
    });
    const started = performance.now();
    s.callbacks.start();
    while (true) {
      const row = await s.database.db
        .selectFrom('callbacks')
        .select((eb) => eb.fn.countAll().as('n'))
        .where('status', '=', 'delivered')
        .executeTakeFirst();
      if (Number(row?.n) >= n) break;
      await new Promise((ok) => setTimeout(ok, 20));
    }
    const seconds = (performance.now() - started) / 1000;
    const perSec = Math.round(n / seconds);
    return { name: 'callback deliveries', deliveries: n, received, seconds: Number(seconds.toFixed(2)), perSec, minPerSec: 1000, pass: perSec >= 1000 };
  } finally {
    await s.close();
    receiver.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(await benchCallbacks());
