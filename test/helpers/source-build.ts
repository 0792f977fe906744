import { cpSync, existsSync, mkdirSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { buildSync } from 'esbuild';

/**
 * The sources of this run compiled once for the processes the tests start (`gengate` commands and
 * servers): each file transpiled on its own by esbuild, as tsx does, but once per run instead of
 * once per process, which made every start cost about a CPU second more than the compiled program
 * (decision 3100). Never `dist/`, which may be stale (decision 0020).
 *
 * The folder mirrors the repository's layout at the same depth (`<root>/.tmp/sources-<pid>/src`),
 * so what the code finds by its own location (catalog/, dist/console, the client CLI) and the
 * packages in node_modules/ resolve as they do from src/.
 */
export function buildSources(root: string): string {
  const parent = path.join(root, '.tmp');
  mkdirSync(parent, { recursive: true });
  removeStale(parent);
  const out = path.join(parent, `sources-${process.pid}`);
  rmSync(out, { recursive: true, force: true });
  compile(path.join(root, 'src'), path.join(out, 'src'));
  // The client CLI is found at packages/client/dist from compiled code (src/main.ts).
  compile(path.join(root, 'packages', 'client', 'src'), path.join(out, 'packages', 'client', 'dist'));
  cpSync(path.join(root, 'src', 'moderation', 'classify-worker.mjs'), path.join(out, 'src', 'moderation', 'classify-worker.mjs'));
  for (const linked of ['catalog', 'dist']) symlinkSync(path.join(root, linked), path.join(out, linked));
  return out;
}

function compile(from: string, to: string): void {
  buildSync({
    entryPoints: tsFiles(from),
    outbase: from,
    outdir: to,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    sourcemap: 'inline',
    logLevel: 'error',
  });
}

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
    .map((f) => path.join(dir, f));
}

/** Folders of runs that ended without their teardown (killed): their process is gone. */
function removeStale(parent: string): void {
  for (const name of readdirSync(parent)) {
    const m = /^sources-(\d+)$/.exec(name);
    if (m && !alive(Number(m[1]))) rmSync(path.join(parent, name), { recursive: true, force: true });
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export function sourcesMain(build: string): string {
  const main = path.join(build, 'src', 'main.js');
  if (!existsSync(main)) throw new Error(`the compiled sources of this run are missing: ${main}`);
  return main;
}
