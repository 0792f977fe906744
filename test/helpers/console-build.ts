import { existsSync, mkdirSync, renameSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * The console built from today's console/ sources once per test run, whichever browser test file
 * asks first: it builds into `<root>/console` under a lock (a folder made with mkdir, which only one
 * process wins), the others wait for it. `root` is the run's folder from the global setup
 * (test/helpers/global-setup.ts, inject('consoleBuildRoot')), removed when the run ends.
 */
export async function consoleBuild(root: string): Promise<string> {
  const dir = path.join(root, 'console');
  const lock = path.join(root, 'console.lock');
  for (;;) {
    if (existsSync(path.join(dir, 'index.html'))) return dir;
    if (takeLock(lock)) {
      try {
        const tmp = path.join(root, `console.${process.pid}.tmp`);
        // Vite is loaded only by the file that builds: the others never pay for it.
        const { build } = await import('vite');
        await build({ configFile: path.resolve('console/vite.config.ts'), logLevel: 'error', build: { outDir: tmp, emptyOutDir: true } });
        renameSync(tmp, dir);
        return dir;
      } finally {
        rmSync(lock, { recursive: true, force: true });
      }
    }
    // Another file builds it: a build takes seconds, so a look every 200 ms is plenty.
    await sleep(200);
  }
}

/** Makes the lock folder; a lock left by a build that died (older than 5 minutes) is taken over. */
function takeLock(lock: string): boolean {
  try {
    mkdirSync(lock);
    return true;
  } catch {
    try {
      if (Date.now() - statSync(lock).mtimeMs > 300_000) rmSync(lock, { recursive: true, force: true });
    } catch {
      /* gone meanwhile: the next round tries again */
    }
    return false;
  }
}
