// CPU per createTask in one process, without HTTP and with the engine off: what the create path
// itself costs (decisions 0009, 0023, 1902). Usage: npx tsx bench/create-cpu.ts, with DB=postgres
// (TEST_DATABASE_URL: a fresh database is made and dropped), N creates (default 20,000), C at once
// (default 20). Prints one JSON line; compare builds by running them interleaved several times.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig } from '../src/config.js';
import { buildServices } from '../src/services.js';
import { createTestDb } from '../test/helpers/db.js';

const which = process.env.DB ?? 'sqlite';
const dir = mkdtempSync(path.join(tmpdir(), 'gengate-create-cpu-'));
const pgDb = which === 'postgres' ? await createTestDb('postgres') : undefined;
const url = pgDb ? pgDb.url : `sqlite:${path.join(dir, 'gengate.db')}`;
const config = loadConfig({ NODE_ENV: 'production', DATA_DIR: dir, DATABASE_URL: url, LOG_LEVEL: 'silent', PORT: '0', ROLE: 'api' });
const services = await buildServices(config);
const account = await services.accounts.create('bench', 1_000_000_000_000);
const principal = await services.auth.authenticate(`Bearer ${account.apiKey}`, 'tasks:write');
const body = { model: 'google/nano-banana', input: { prompt: 'bench: a red kite over the sea', aspect_ratio: '1:1' } };
const C = Number(process.env.C ?? 20);
const N = Number(process.env.N ?? 20_000);

/** `n` creates, `C` at a time. */
async function run(n: number): Promise<void> {
  let left = n;
  await Promise.all(
    Array.from({ length: C }, async () => {
      while (left-- > 0) await services.tasks.create(principal, structuredClone(body), undefined);
    }),
  );
}

await run(2_000);
const cpu0 = process.cpuUsage();
const t0 = performance.now();
await run(N);
const cpu = process.cpuUsage(cpu0);
const ms = performance.now() - t0;
console.log(
  JSON.stringify({
    db: which,
    creates: N,
    cpuUsPerCreate: Number(((cpu.user + cpu.system) / N).toFixed(1)),
    userUs: Number((cpu.user / N).toFixed(1)),
    sysUs: Number((cpu.system / N).toFixed(1)),
    perSec: Math.round((N / ms) * 1000),
  }),
);
await services.close();
await pgDb?.drop();
rmSync(dir, { recursive: true, force: true });
