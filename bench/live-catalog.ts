import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parse } from 'yaml';
import { DEFAULT_CATALOG_DIR, LiveCatalog, loadCatalog } from '../src/catalog/index.js';
import { systemClock } from '../src/clock.js';
import { migrate, openDatabase } from '../src/store/index.js';
import { measure, startProcess, stopProcess } from './http.js';
import { topUp, drain } from './burst.js';
import { benchDefinitions } from './definitions.js';

/**
 * Issue 33 item 3 (decisions 3304, 3305): 500 definitions stored in the database load (read, check,
 * compile, catalog) within 300 ms, as a process that starts or sees a new generation does; and a
 * reload under load loses no request: createTask of a stored model at full speed while its
 * definition is changed through the admin API several times a second, with no answer but 200, its
 * rate shown as a ratio to the same load without changes in the same run.
 */

export const STORED_COUNT = 500;
export const STORED_MAX_MS = 300;
/** The stored load against loading the same number of JSON definition files in the same run: the database's share on top. */
export const STORED_MAX_RATIO = 1.5;

/** The shipped definitions as JSON bodies under `count` new ids (aliases left out: each name once). */
function bodies(count: number): string[] {
  const shipped = readdirSync(DEFAULT_CATALOG_DIR)
    .filter((f) => f.endsWith('.yaml'))
    .map((f) => parse(readFileSync(path.join(DEFAULT_CATALOG_DIR, f), 'utf8')) as Record<string, unknown>);
  return Array.from({ length: count }, (_, i) => {
    const { aliases: _aliases, ...rest } = shipped[i % shipped.length]!;
    return JSON.stringify({ ...rest, id: `bench/stored-${i}` });
  });
}

/** Milliseconds for a process to load `count` stored definitions: the median of new LiveCatalogs over one SQLite database. */
export async function benchStoredLoad(
  count = STORED_COUNT,
  rounds = 5,
): Promise<{ name: string; medianMs: number; maxMs: number; fileMs: number; ratio: number; pass: boolean }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'gengate-stored-'));
  const database = openDatabase(`sqlite:${path.join(dir, 'bench.db')}`);
  try {
    await migrate(database);
    const now = Date.now();
    const all = bodies(count);
    await database.tx(async (trx) => {
      for (const [i, body] of all.entries()) {
        const id = `bench/stored-${i}`;
        await trx
          .insertInto('model_definition_versions')
          .values({ model_id: id, version: 1, action: 'create', body, who: 'bench', note: null, created_at: now })
          .execute();
        await trx.insertInto('model_definitions').values({ model_id: id, version: 1, retired: 0, body, updated_at: now }).execute();
      }
    });
    const file = loadCatalog({});
    const samples: number[] = [];
    for (let r = 0; r < rounds; r++) {
      const live = new LiveCatalog(database, file, systemClock, 2000);
      const t = process.hrtime.bigint();
      await live.refresh();
      samples.push(Number(process.hrtime.bigint() - t) / 1e6);
      if (live.catalog.models.length !== file.models.length + count) throw new Error(`stored definitions did not load: ${live.broken[0]?.problems[0]?.why}`);
    }
    const medianMs = [...samples].sort((a, b) => a - b)[Math.floor(samples.length / 2)]!;
    // The baseline of the same run: the same count of definition files (JSON) read, checked and compiled.
    const fileMs = (await benchDefinitions(true, count, rounds)).medianMs;
    const ratio = Math.round((medianMs / fileMs) * 1000) / 1000;
    const name = `load ${count} stored model definitions from the database (SQLite)`;
    return { name, medianMs, maxMs: STORED_MAX_MS, fileMs, ratio, pass: ratio <= STORED_MAX_RATIO };
  } finally {
    await database.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

export interface ReloadBench {
  name: string;
  baselinePerSec: number;
  reloadingPerSec: number;
  ratio: number;
  reloads: number;
  non2xx: number;
  pass: boolean;
}

/** createTask at full speed without, then with, definition changes every `everyMs`; passes when every answer is 200. */
export async function benchReloadUnderLoad(opts: { seconds: number; connections: number; everyMs?: number }): Promise<ReloadBench> {
  const dir = mkdtempSync(path.join(tmpdir(), 'gengate-reload-'));
  const admin = 'bench-admin-token-0123456789';
  const server = await startProcess(
    ['src/main.ts', 'serve'],
    {
      DATA_DIR: dir,
      PORT: '0',
      NODE_ENV: 'production',
      ADMIN_TOKEN: admin,
      LOG_LEVEL: 'warn',
      RATE_LIMIT_READ: '1000000000',
      RATE_LIMIT_WRITE: '1000000000',
      RATE_LIMIT_PUBLIC: '1000000000',
    },
    path.join(dir, 'gengate.log'),
  );
  try {
    const key = readFileSync(path.join(dir, 'first-api-key.txt'), 'utf8').trim();
    await topUp(dir, 1_000_000);
    const id = 'bench/live';
    const definition = (rate: string) => ({
      title: 'Bench live',
      kind: 'image',
      description: 'A model edited while it takes tasks.',
      inputs: { prompt: { type: 'text', max: 1000, required: true, description: 'Prompt.' } },
      price: { unit: 'image', rate },
      routes: [{ backend: 'local' }],
    });
    const put = async (rate: string) => {
      const r = await fetch(`${server.url}/admin/v1/definitions/${encodeURIComponent(id)}`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
        body: JSON.stringify({ definition: definition(rate) }),
      });
      if (r.status !== 200) throw new Error(`PUT definition answered ${r.status}: ${await r.text()}`);
    };
    await put('0.010');
    const request = {
      method: 'POST' as const,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: id, input: { prompt: 'bench' } }),
      seconds: opts.seconds,
      connections: opts.connections,
    };
    const url = `${server.url}/api/v1/jobs/createTask`;
    const baseline = await measure('createTask of a stored model', url, request);
    await drain(dir);
    let reloads = 0;
    let stop = false;
    const changer = (async () => {
      for (let i = 0; !stop; i++) {
        await put(`0.0${10 + (i % 80)}`);
        reloads++;
        await new Promise((r) => setTimeout(r, opts.everyMs ?? 100));
      }
    })();
    const loaded = await measure('createTask while its definition changes', url, request);
    stop = true;
    await changer;
    await drain(dir);
    const ratio = Math.round((loaded.reqPerSec / Math.max(1, baseline.reqPerSec)) * 1000) / 1000;
    return {
      name: 'reload under load: createTask of a model whose definition changes',
      baselinePerSec: baseline.reqPerSec,
      reloadingPerSec: loaded.reqPerSec,
      ratio,
      reloads,
      non2xx: loaded.non2xx + baseline.non2xx,
      pass: loaded.non2xx === 0 && baseline.non2xx === 0 && reloads > 0,
    };
  } finally {
    await stopProcess(server.child);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The two lines as `npm run bench` prints them. */
export function printLiveCatalog(load: Awaited<ReturnType<typeof benchStoredLoad>>, reload: ReloadBench): void {
  console.log(
    `${load.name}: median ${load.medianMs.toFixed(1)} ms (issue's target ${load.maxMs} ms: ${load.medianMs <= load.maxMs ? 'met' : 'not met'}); ` +
      `${load.ratio} of the ${load.fileMs.toFixed(1)} ms the same count of JSON definition files takes in this run (max ${STORED_MAX_RATIO})`,
    load.pass ? 'PASS' : 'FAIL',
  );
  console.log(
    `${reload.name}: ${reload.reloadingPerSec} req/s during ${reload.reloads} changes vs ${reload.baselinePerSec} req/s without, ratio ${reload.ratio} ` +
      `(information); non-2xx ${reload.non2xx} (must be 0)`,
    reload.pass ? 'PASS' : 'FAIL',
  );
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const load = await benchStoredLoad();
  const reload = await benchReloadUnderLoad({ seconds: Number(process.env.BENCH_SECONDS ?? 5), connections: Number(process.env.BENCH_CONNECTIONS ?? 20) });
  printLiveCatalog(load, reload);
  process.exit(load.pass && reload.pass ? 0 : 1);
}
