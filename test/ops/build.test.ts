import { execFile, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDb, dialects, type TestDb } from '../helpers/db.js';
import { eventually } from '../tasks/support.js';

const run = promisify(execFile);
const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { bin: Record<string, string>; scripts: Record<string, string> };

/** What `npm run build` reads, and what it writes last of each part. */
const BUILD_INPUTS = ['src', 'console', 'packages/client/src', 'tsconfig.json', 'tsconfig.build.json', 'packages/client/tsconfig.json', 'package.json'];
const BUILD_OUTPUTS = ['dist/main.js', 'dist/console/index.html', 'packages/client/dist/index.js'];

/** The newest change under `p`: files and folders (a folder's time moves when a file in it is added or deleted). */
function newest(p: string): number {
  const st = statSync(p);
  if (!st.isDirectory()) return st.mtimeMs;
  return Math.max(st.mtimeMs, ...readdirSync(p).map((name) => newest(path.join(p, name))));
}

/** Whether dist/ (and the SDK's dist/) was built after the last change to what the build reads. */
function builtFromToday(): boolean {
  if (!BUILD_OUTPUTS.every((f) => existsSync(f))) return false;
  return Math.min(...BUILD_OUTPUTS.map((f) => statSync(f).mtimeMs)) > Math.max(...BUILD_INPUTS.map(newest));
}

/**
 * The compiled program, as `npm install` leaves it: this file builds dist/ itself (`npm run build`,
 * the prepare step) unless it was built after the last change of the sources (as `npm ci` has just
 * done on CI), so it never checks a stale build; every other test runs the sources (decision 0020).
 */
describe('the compiled program (npm run build, bin/gengate.js, npm start)', () => {
  beforeAll(async () => {
    if (!builtFromToday()) await run('npm', ['run', 'build'], { env: { ...process.env, npm_config_loglevel: 'error' } });
  }, 300_000);

  it('is what the bin and the start scripts run: JavaScript in dist/, no TypeScript loader', () => {
    expect(pkg.bin.gengate).toBe('bin/gengate.js');
    expect(pkg.scripts.prepare).toBe('npm run build');
    expect(pkg.scripts.start).toBe('NODE_ENV=production node dist/main.js serve');
    expect(pkg.scripts.gengate).toBe('node dist/main.js');
    expect(readFileSync('bin/gengate.js', 'utf8')).not.toMatch(/tsx|\.ts'/);
  });

  it('has every file of src/ in dist/: each module compiled, and the JavaScript loaded by URL (worker threads)', () => {
    const files = (dir: string) =>
      readdirSync(dir, { recursive: true, withFileTypes: true })
        .filter((e) => e.isFile() && /\.(ts|js|mjs)$/.test(e.name))
        .map((e) => path.relative(dir, path.join(e.parentPath, e.name)));
    const expected = files('src')
      .map((f) => f.replace(/\.ts$/, '.js'))
      .sort();
    expect(
      files('dist')
        .filter((f) => !f.startsWith(`console${path.sep}`))
        .sort(),
    ).toEqual(expected);
  });

  it('has the console in dist/console: index.html and its hashed assets, under 200 KB of script for the first page (decision 2000)', () => {
    const page = readFileSync('dist/console/index.html', 'utf8');
    const scripts = [...page.matchAll(/src="\/console\/assets\/([^"]+\.js)"/g)].map((m) => m[1]!);
    expect(scripts.length).toBeGreaterThan(0);
    const preloads = [...page.matchAll(/rel="modulepreload"[^>]*href="\/console\/assets\/([^"]+\.js)"/g)].map((m) => m[1]!);
    const assets = readdirSync('dist/console/assets');
    // The first page loads its script and what it preloads; the chart library (uPlot, decision 2001) is a chunk of its own, loaded by the usage page only.
    const first = [...scripts, ...preloads];
    const bytes = first.reduce((sum, f) => sum + readFileSync(path.join('dist/console/assets', f)).length, 0);
    for (const s of first) expect(assets).toContain(s);
    expect(bytes).toBeLessThan(200 * 1024);
    const chart = assets.find((f) => /^chart-.*\.js$/.test(f));
    expect(chart).toBeDefined();
    expect(first).not.toContain(chart);
    expect(page).not.toMatch(/https?:\/\//); // nothing from a CDN
  });

  it('builds the SDK package (decision 2200): JavaScript with declarations, and its client commands run from the bin without server settings', async () => {
    const client = JSON.parse(readFileSync('packages/client/package.json', 'utf8')) as {
      exports: { '.': { import: string; types: string } };
      bin: Record<string, string>;
    };
    for (const f of [client.exports['.'].import, client.exports['.'].types, client.bin['gengate-client']!]) {
      expect(readFileSync(path.join('packages/client', f), 'utf8').length, f).toBeGreaterThan(0);
    }
    const noKey = await run(process.execPath, ['bin/gengate.js', 'balance'], {
      env: { ...process.env, DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none', PORT: 'x', GENGATE_CONFIG_DIR: '/nonexistent', GENGATE_API_KEY: '' },
    }).catch((e: { code: number; stderr: string }) => e);
    expect(noKey).toMatchObject({ code: 2, stderr: expect.stringMatching(/no API key/) });
  }, 240_000);

  describe.each(dialects())('on %s', (dialect) => {
    let db: TestDb;
    beforeAll(async () => {
      db = await createTestDb(dialect);
    });
    afterAll(async () => {
      await db.drop();
    });
    const env = () => ({ ...process.env, DATABASE_URL: db.url, DATA_DIR: db.dir, LOG_LEVEL: 'silent' });

    it('bin/gengate.js runs operator commands', async () => {
      const created = await run(process.execPath, ['bin/gengate.js', '--new-database', 'account', 'create', '--name', 'built', '--balance', '2', '--json'], {
        env: env(),
      });
      expect(JSON.parse(created.stdout).account).toMatchObject({ name: 'built', balance: '2.0000' });
      const listed = await run(process.execPath, ['bin/gengate.js', 'account', 'list'], { env: env() });
      expect(listed.stdout).toMatch(/active\s+2\.0000 USD {2}built/);
    }, 240_000);

    it('npm start serves /healthz and the console at /, and stops on SIGTERM', async () => {
      // Its own process group: npm runs the script through a shell, and the whole group gets the signal.
      const child = spawn('npm', ['start', '--silent'], { env: { ...env(), PORT: '0', FIRST_RUN_ACCOUNT: 'false' }, detached: true });
      let out = '';
      child.stdout.on('data', (d) => (out += d));
      child.stderr.on('data', (d) => (out += d));
      const exited = new Promise<number | string | null>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)));
      const url = await new Promise<string>((resolve, reject) => {
        child.stdout.on('data', () => {
          const m = /listening on (http:\/\/\S+)/.exec(out);
          if (m) resolve(m[1]!);
        });
        void exited.then((code) => reject(new Error(`npm start exited with ${code}:\n${out}`)));
      });
      const health = await fetch(`${url}/healthz`);
      expect(health.status).toBe(200);
      const page = await fetch(`${url}/`);
      expect(page.status).toBe(200);
      expect(page.headers.get('cache-control')).toBe('no-store');
      const script = /src="(\/console\/assets\/[^"]+\.js)"/.exec(await page.text())![1]!;
      const asset = await fetch(url + script);
      expect(asset.status).toBe(200);
      expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      process.kill(-child.pid!, 'SIGTERM');
      // npm itself may die of the signal, before the server has finished closing (a busy machine
      // makes that window long); the server must be gone either way, soon after.
      expect([0, 'SIGTERM']).toContain(await exited);
      await eventually(
        () =>
          fetch(`${url}/healthz`).then(
            () => false,
            () => true,
          ),
        30_000,
        'the server to stop answering',
      );
    }, 240_000);
  });
});
