// The last step of `npm test` (decision 2403): the suite's folders that touch the runtime (SQLite,
// the CLI, process stops, V8's heap, uploads) once more under each other Node line whose binary is
// at hand. `.ci/run` installs Node 24 and 26 from the npm registry's `node` package into
// .ci/cache/ (ignored by git); GENGATE_TEST_NODES names other binaries (space-separated paths).
// Without any, a notice says so loudly and the step passes, unless TEST_NO_SKIP=1 (CI),
// which makes a missing line a failure. A run fails on a failed test and on any native abort
// ("Assertion failed" anywhere in its output).
import { spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';

/**
 * What runs under every other line: the tests of what depends on the runtime, picked to keep CI
 * short (about a minute a line; decision 2403 has the figures): SQLite through the driver seam
 * (store, guards, the side reader, checkpoints, statement counts), process stops and CLI exit
 * codes, V8's heap factor, refusals read by Node's fetch, files on disk and S3. The whole suite
 * passed under Node 24 too (21 files of these folders, 198 tests, when this list was made).
 */
export const LINE_TESTS = [
  'test/store',
  'test/ops/exit.test.ts',
  'test/ops/heap.test.ts',
  'test/ops/ops.test.ts',
  'test/files/refusals.test.ts',
  'test/files/disk-blobs.test.ts',
  'test/files/sink.test.ts',
  'test/files/s3.test.ts',
  'test/cli/cli-database.test.ts',
  'test/tasks/create-statements.test.ts',
];

/** The lines CI installs (.ci/run); each is looked for at .ci/cache/node-<major>/node_modules/node/bin/node. */
export const CI_LINES = ['24', '26'];

const CACHE = path.join('.ci', 'cache');

/** The other Node binaries to run under: GENGATE_TEST_NODES, else every one in .ci/cache/. */
export function lineBinaries(env: NodeJS.ProcessEnv = process.env): string[] {
  const given = env.GENGATE_TEST_NODES?.split(/\s+/).filter(Boolean);
  if (given?.length) return given;
  if (!existsSync(CACHE)) return [];
  return readdirSync(CACHE)
    .filter((d) => /^node-\d+$/.test(d))
    .map((d) => path.join(CACHE, d, 'node_modules', 'node', 'bin', 'node'))
    .filter((bin) => existsSync(bin));
}

/** Runs the line's tests with `bin` first on PATH (so the processes the tests start run on it too); passes output through. */
function runUnder(bin: string): Promise<{ code: number | null; aborted: boolean; seconds: number }> {
  const started = Date.now();
  const dir = path.dirname(path.resolve(bin));
  return new Promise((resolve) => {
    const child = spawn(path.resolve(bin), ['node_modules/vitest/vitest.mjs', 'run', ...LINE_TESTS], {
      env: { ...process.env, PATH: `${dir}${path.delimiter}${process.env.PATH ?? ''}` },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let aborted = false;
    // The last bytes of the previous chunk too, so a line split across two chunks is still seen.
    let tail = '';
    const scan = (chunk: Buffer, to: NodeJS.WriteStream) => {
      const text = tail + chunk.toString();
      if (text.includes('Assertion failed')) aborted = true;
      tail = text.slice(-32);
      to.write(chunk);
    };
    child.stdout.on('data', (c: Buffer) => scan(c, process.stdout));
    child.stderr.on('data', (c: Buffer) => scan(c, process.stderr));
    child.on('close', (code) => resolve({ code, aborted, seconds: Math.round((Date.now() - started) / 1000) }));
  });
}

async function main(): Promise<number> {
  const strict = process.env.TEST_NO_SKIP === '1';
  const bins = lineBinaries();
  const found = new Map<string, string>();
  for (const bin of bins) {
    const version = await new Promise<string>((resolve) => {
      const c = spawn(bin, ['-p', 'process.version'], { stdio: ['ignore', 'pipe', 'ignore'] });
      let out = '';
      c.stdout.on('data', (d) => (out += d));
      c.on('close', () => resolve(out.trim()));
      c.on('error', () => resolve(''));
    });
    if (version) found.set(bin, version);
  }
  const missing = CI_LINES.filter((major) => ![...found.values()].some((v) => v.startsWith(`v${major}.`)));
  if (found.size === 0 || missing.length > 0) {
    const bar = '!'.repeat(100);
    process.stderr.write(
      `\n${bar}\nNODE LINES NOT TESTED: no Node ${missing.join(' or ')} binary found (.ci/run installs them into .ci/cache/ from the npm registry's node package;\n` +
        `GENGATE_TEST_NODES names others). Only node ${process.version} ran the suite.${strict ? ' TEST_NO_SKIP=1: this is a failure.' : ''}\n${bar}\n\n`,
    );
    if (strict) return 1;
  }
  let failed = false;
  for (const [bin, version] of found) {
    process.stdout.write(`\n=== the runtime-dependent tests under node ${version} (${bin}) ===\n`);
    const r = await runUnder(bin);
    const verdict = r.code === 0 && !r.aborted ? 'passed' : r.aborted ? 'FAILED: a native abort ("Assertion failed") in the output' : `FAILED (exit ${r.code})`;
    process.stdout.write(`=== node ${version}: ${verdict}, ${r.seconds} s ===\n`);
    if (verdict !== 'passed') failed = true;
  }
  return failed ? 1 : 0;
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve('scripts/test-lines.ts')) process.exitCode = await main();
