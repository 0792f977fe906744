import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { buildServices, type Services } from '../../src/services.js';
import { MIGRATIONS } from '../../src/store/index.js';
import { createTestDb, type TestDb } from '../helpers/db.js';
import { startReceiver } from '../callbacks/receiver.js';
import { eventually } from '../tasks/support.js';
import { expectNothingLost, startLoad, startMember, stopMember, type Member } from './fleet.js';

/**
 * An upgrade that loses nothing (decision 2601): the previous release, built from git into a
 * temporary folder, runs an API process and two workers under load; the new release's API starts
 * beside them (and migrates), then its workers; the old processes are stopped; no task is lost and
 * none charged twice. The previous release is the commit before the newest migration was added
 * (so the upgrade always crosses a schema change), or GENGATE_PREVIOUS_RELEASE. It reuses this
 * checkout's node_modules when every package of that commit's lock file is here at the same
 * version; otherwise it is skipped with a notice unless GENGATE_UPGRADE_INSTALL=1 (npm ci there
 * takes minutes). It starts eight processes from TypeScript sources, so it takes 30-90 s.
 */
const ROOT = process.cwd();
const git = (args: string[]) => promisify(execFile)('git', args, { cwd: ROOT, maxBuffer: 64 * 1024 * 1024 }).then((r) => r.stdout.trim());
const notice = (why: string) => process.stderr.write(`\n*** NOTICE: the upgrade test is SKIPPED: ${why} ***\n\n`);

/** The previous release's commit, or null (with the reason) when git cannot give it. */
async function previousRelease(): Promise<string | null> {
  try {
    if (process.env.GENGATE_PREVIOUS_RELEASE) return await git(['rev-parse', '--verify', `${process.env.GENGATE_PREVIOUS_RELEASE}^{commit}`]);
    const newest = readdirSync('src/store/migrations').filter((f) => f.startsWith(String(MIGRATIONS.at(-1)!.version).padStart(3, '0')))[0]!;
    const added = await git(['log', '-1', '--format=%H', '--diff-filter=A', '--', `src/store/migrations/${newest}`]);
    if (!added) throw new Error(`no commit adds ${newest} (uncommitted?)`);
    return await git(['rev-parse', '--verify', `${added}^`]);
  } catch (e) {
    notice(`git cannot give the previous release (${(e as Error).message.split('\n')[0]})`);
    return null;
  }
}

/** Whether every package the old lock file names is installed here at the same version. */
function sameOrSubset(oldLock: string): boolean {
  const here = (JSON.parse(readFileSync('package-lock.json', 'utf8')) as { packages: Record<string, { version?: string }> }).packages;
  const old = (JSON.parse(oldLock) as { packages: Record<string, { version?: string }> }).packages;
  return Object.entries(old).every(([name, p]) => name === '' || here[name]?.version === p.version);
}

/** Unpacks `commit` into a temporary folder with this checkout's node_modules, or null when that cannot run it. */
async function unpack(commit: string): Promise<string | null> {
  const dir = mkdtempSync(path.join(tmpdir(), 'gengate-previous-'));
  await promisify(execFile)('sh', ['-c', `git -C "${ROOT}" archive --format=tar ${commit} | tar -x -C "${dir}"`]);
  if (sameOrSubset(readFileSync(path.join(dir, 'package-lock.json'), 'utf8'))) {
    symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
    return dir;
  }
  if (process.env.GENGATE_UPGRADE_INSTALL === '1') {
    await promisify(execFile)('npm', ['ci', '--no-audit', '--no-fund', '--ignore-scripts'], { cwd: dir });
    await promisify(execFile)('npm', ['rebuild', 'better-sqlite3', 'esbuild'], { cwd: dir });
    return dir;
  }
  rmSync(dir, { recursive: true, force: true });
  notice(`the packages of ${commit.slice(0, 10)} differ from this checkout's (set GENGATE_UPGRADE_INSTALL=1 to npm ci them)`);
  return null;
}

describe('an upgrade under load: the previous release beside the new one', () => {
  const members: Member[] = [];
  const closers: Array<() => Promise<unknown>> = [];
  afterAll(async () => {
    for (const m of members.splice(0)) await stopMember(m, 'SIGKILL');
    for (const c of closers.splice(0).reverse()) await c();
  });

  it('migrates while old workers run, hands over to new ones, and loses nothing', async () => {
    const commit = await previousRelease();
    const old = commit ? await unpack(commit) : null;
    if (!old) return;
    closers.push(async () => rmSync(old, { recursive: true, force: true }));
    const dialect = process.env.TEST_DATABASE_URL ? 'postgres' : 'sqlite';
    const db: TestDb = await createTestDb(dialect);
    closers.push(() => db.drop());
    const receiver = await startReceiver(() => 200);
    closers.push(receiver.close);
    const env = {
      DATA_DIR: db.dir,
      DATABASE_URL: db.url,
      GENGATE_SECRET_KEY: 'upgrade-test-secret-key-0123456789abcdef',
      FIRST_RUN_ACCOUNT: 'false',
      LOCAL_QUEUE_MS: '50',
      LOCAL_GENERATE_MS: '150',
      ENGINE_POLL_MS: '100',
      ENGINE_LEASE_MS: '3000',
      ENGINE_RETRY_MS: '50',
      CALLBACK_RETRY_DELAYS_MS: '100,200,400',
      ALLOW_PRIVATE_NETWORK: 'true',
      MODERATION_IMAGES: 'off',
    };
    const run = (cwd: string, role: 'api' | 'worker') =>
      startMember(cwd, role, env).then((m) => {
        members.push(m);
        return m;
      });
    // The previous release makes the database and the accounts, and runs alone for a while.
    const cli = (args: string[]) =>
      promisify(execFile)(process.execPath, ['--import', 'tsx', 'src/main.ts', ...args], { cwd: old, env: { ...process.env, ...env, LOG_LEVEL: 'silent' } });
    await cli(['migrate', '--new-database']);
    const keys = await Promise.all(
      [0, 1].map(async (i) => /API key \(shown once\): (\S+)/.exec((await cli(['account', 'create', '--name', `up-${i}`, '--balance', '50'])).stdout)![1]!),
    );
    const [oldApi, w0, w1] = await Promise.all([run(old, 'api'), run(old, 'worker'), run(old, 'worker')]);
    const urls = [oldApi!.url];
    const load = startLoad(urls, keys, receiver.url);
    closers.push(() => load.stop().catch(() => {}));
    const accepted = () => load.report.accepted.size;
    await eventually(() => accepted() >= 20, 60_000, 'tasks on the previous release');

    // The new API starts (and migrates) beside the old processes; the old workers keep working.
    const newApi = await run(ROOT, 'api');
    urls.push(newApi.url);
    let mark = accepted();
    await eventually(() => accepted() >= mark + 20, 60_000, 'tasks after the migration, old workers only');
    // An old worker cannot start again on the migrated database (it would not know the new columns).
    const late = await startMember(old, 'worker', env).then(
      (m) => (members.push(m), 'started'),
      (e: Error) => e.message,
    );
    expect(late).toMatch(/exited with 2:[\s\S]*migrated by a newer GenGate: migration \d+ \(.*\) is unknown to this version/);
    // New workers join, then every old process stops (SIGTERM: their steps finish or go back).
    await Promise.all([run(ROOT, 'worker'), run(ROOT, 'worker')]);
    mark = accepted();
    await eventually(() => accepted() >= mark + 10, 60_000, 'tasks with old and new workers');
    urls.splice(urls.indexOf(oldApi!.url), 1);
    const exits = await Promise.all([oldApi!, w0!, w1!].map((m) => stopMember(m)));
    mark = accepted();
    await eventually(() => accepted() >= mark + 10, 60_000, 'tasks on the new release alone');
    const report = await load.stop();
    expect(exits).toEqual([0, 0, 0]);
    expect(report.statuses.filter((s) => s >= 500)).toEqual([]);
    const services: Services = await buildServices(loadConfig({ ...env, LOG_LEVEL: 'silent' }), { upstreams: false });
    closers.push(() => services.close());
    await expectNothingLost(services, report.accepted);
    process.stderr.write(`upgrade from ${commit!.slice(0, 10)} (${dialect}): ${report.accepted.size} tasks\n`);
  }, 300_000);
});
