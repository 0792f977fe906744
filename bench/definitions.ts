import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parse } from 'yaml';
import { DEFAULT_CATALOG_DIR, buildCatalog, readDefinitions } from '../src/catalog/index.js';

/**
 * Issue 33: 500 model definitions load in at most 300 ms. The 19 shipped definitions are copied
 * under 500 new ids (aliases left out: each name is used once) into a folder, then read, checked
 * and compiled as a start reads GENGATE_MODELS, and made into a catalog; the figure is the median
 * of several loads in one process (the first load, cold, is shown too).
 */

export const DEFINITIONS_COUNT = 500;
export const DEFINITIONS_MAX_MS = 300;

/** `count` definitions in a new folder, as JSON (the form the database and the admin API carry) or as YAML files. */
function writeFolder(count: number, json: boolean): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'gengate-defs-'));
  const shipped = readdirSync(DEFAULT_CATALOG_DIR)
    .filter((f) => f.endsWith('.yaml'))
    .map((f) => readFileSync(path.join(DEFAULT_CATALOG_DIR, f), 'utf8'));
  for (let i = 0; i < count; i++) {
    const text = shipped[i % shipped.length]!.replace(/^id: .*$/m, `id: bench/model-${i}`).replace(/^aliases:\n(?: {2}.*\n)+/m, '');
    const name = `${String(i).padStart(4, '0')}.${json ? 'json' : 'yaml'}`;
    writeFileSync(path.join(dir, name), json ? JSON.stringify(parse(text)) : text);
  }
  return dir;
}

/** Milliseconds to load `count` definitions: the cold first load and the median of the next ones. */
export async function benchDefinitions(
  json = true,
  count = DEFINITIONS_COUNT,
  rounds = 7,
): Promise<{ name: string; coldMs: number; medianMs: number; pass?: boolean }> {
  const dir = writeFolder(count, json);
  try {
    const samples: number[] = [];
    for (let i = 0; i < rounds; i++) {
      const t = process.hrtime.bigint();
      const read = readDefinitions(dir);
      if (read.problems.length > 0 || read.models.length !== count)
        throw new Error(`bench definitions did not load: ${read.problems[0]?.why ?? read.models.length}`);
      buildCatalog({}, 'bench', read.models);
      samples.push(Number(process.hrtime.bigint() - t) / 1e6);
    }
    const coldMs = samples[0]!;
    const warm = samples.slice(1).sort((a, b) => a - b);
    const medianMs = warm[Math.floor(warm.length / 2)]!;
    const name = `load ${count} model definitions from ${json ? 'JSON' : 'YAML (for information)'} (read, check, compile, catalog)`;
    return { name, coldMs, medianMs, ...(json ? { pass: medianMs <= DEFINITIONS_MAX_MS } : {}) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  for (const json of [true, false]) {
    const r = await benchDefinitions(json);
    const verdict = r.pass === undefined ? '' : ` (target ≤ ${DEFINITIONS_MAX_MS} ms) ${r.pass ? 'PASS' : 'FAIL'}`;
    process.stdout.write(`${r.name}: median ${r.medianMs.toFixed(1)} ms, first ${r.coldMs.toFixed(1)} ms${verdict}\n`);
  }
}
