import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/store/index.js';
import { gengate } from '../helpers/cli.js';
import { createTestDb } from '../helpers/db.js';
import { startS3, type TestS3 } from '../helpers/s3.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { FAST, eventually, expectLedgerInvariant, fetchFile, resultUrls, settle } from '../tasks/support.js';

/**
 * `gengate backup` and `gengate restore` (decision 2601): a backup made by the real command while
 * tasks are created, worked and refunded restores into a fresh data folder with every task that was
 * answered before it started, every balance equal to its ledger, and every file it names.
 */
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** Creates tasks from `keys` in turn until `stop()` (every 4th fails after generating, so it is refunded); records when each was answered. */
function load(s: TestServer, keys: string[]) {
  const answered: Array<{ taskId: string; at: number }> = [];
  let running = true;
  const loops = keys.map(async (key, k) => {
    for (let n = 0; running; n++) {
      const prompt = n % 4 === 3 ? 'backup gengate:fail=501' : `backup ${k}`;
      const r = await s.call('POST', '/api/v1/jobs/createTask', { key, body: { model: 'seedream-flash', input: { prompt, seed: 3, output_format: 'jpeg' } } });
      if (r.status === 200) answered.push({ taskId: r.body.data.taskId, at: Date.now() });
      else if (r.status !== 402) throw new Error(`createTask answered ${r.status}: ${JSON.stringify(r.body)}`);
    }
  });
  return {
    answered,
    stop: async () => {
      running = false;
      await Promise.all(loops);
    },
  };
}

/** The restored data folder's database, checked: ledger, tasks answered before the backup began, and each file row's bytes. */
async function checkRestored(dir: string, before: string[], blobsAt: string | null): Promise<Database> {
  const restored = openDatabase(`sqlite:${path.join(dir, 'gengate.db')}`);
  await expectLedgerInvariant(restored);
  const ids = new Set((await restored.db.selectFrom('tasks').select('id').execute()).map((t) => t.id));
  expect(before.filter((id) => !ids.has(id))).toEqual([]);
  if (blobsAt) {
    const files = await restored.db.selectFrom('files').select(['blob_key']).where('deleted_at', 'is', null).execute();
    expect(files.length).toBeGreaterThan(0);
    for (const f of files) expect(sha(readFileSync(path.join(dir, 'files', f.blob_key)))).toBe(sha(readFileSync(path.join(blobsAt, 'files', f.blob_key))));
  }
  return restored;
}

describe('gengate backup and restore (SQLite)', () => {
  let s: TestServer | undefined;
  let s3: TestS3 | undefined;
  const dirs: string[] = [];
  const fresh = () => {
    const d = mkdtempSync(path.join(tmpdir(), 'gengate-restore-'));
    dirs.push(d);
    return d;
  };
  afterEach(async () => {
    await s?.close();
    s = undefined;
    await s3?.close();
    s3 = undefined;
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it('backs up to a folder while tasks run; the restore has every task answered before, balances equal to ledgers, every file, and the server serves them', async () => {
    s = await startServer('sqlite', FAST);
    s.services.engine.start();
    const accounts = await Promise.all([0, 1, 2].map((i) => s!.account(0.5, `backup-${i}`)));
    const running = load(
      s,
      accounts.map((a) => a.key),
    );
    await eventually(() => running.answered.length >= 30, 30_000, '30 tasks created');
    const env = { DATA_DIR: s.db.dir, DATABASE_URL: s.db.url };
    const target = path.join(fresh(), 'nightly');
    const began = Date.now();
    const made = await gengate(['backup', target], env);
    await running.stop();
    expect(made.code, made.stderr).toBe(0);
    expect(made.stdout).toMatch(new RegExp(`^backup ${target}: 3 accounts, \\d+ tasks, \\d+ files, migration \\d+, secret\\.key`));
    // Its file modes are the server's: owner only.
    expect(statSync(path.join(target, 'gengate.db')).mode & 0o077).toBe(0);
    const before = running.answered.filter((a) => a.at < began).map((a) => a.taskId);
    expect(before.length).toBeGreaterThanOrEqual(30);
    await s.services.engine.stop();

    const dir = fresh();
    const restore = await gengate(['restore', target], { DATA_DIR: dir });
    expect(restore.code, restore.stderr).toBe(0);
    expect(restore.stdout).toMatch(/^restored .* \d+ accounts, \d+ tasks, \d+ files/);
    const restored = await checkRestored(dir, before, s.db.dir);
    await restored.close();
    // A second restore over it is refused unless forced.
    const again = await gengate(['restore', target], { DATA_DIR: dir });
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/^gengate: restore: a database is already at .*add --force/m);

    // The restored folder is a working server: the same key sees a finished task and its file, byte for byte.
    const original = s;
    s = undefined;
    const done = (await original.services.database.db.selectFrom('tasks').select('id').where('state', '=', 'success').where('id', 'in', before).execute())[0]!
      .id;
    const owner = (await original.services.database.db.selectFrom('tasks').select('account_id').where('id', '=', done).executeTakeFirstOrThrow()).account_id;
    const ownerKey = accounts.find((a) => a.id === owner)!.key;
    const originalBytes = Buffer.from(await (await fetchFile(original, resultUrls(await settle(original, ownerKey, done))[0]!)).arrayBuffer());
    await original.close();
    const back = await startServer('sqlite', { ...FAST, DATA_DIR: dir, DATABASE_URL: `sqlite:${path.join(dir, 'gengate.db')}` });
    s = back;
    const task = await settle(back, ownerKey, done);
    const bytes = Buffer.from(await (await fetchFile(back, resultUrls(task)[0]!)).arrayBuffer());
    expect(sha(bytes)).toBe(sha(originalBytes));
  }, 240_000);

  it('backs up to the bucket (s3:) and restores from it; the files stay in the bucket', async () => {
    s3 = await startS3();
    s = await startServer('sqlite', { ...FAST, ...s3.env });
    s.services.engine.start();
    const a = await s.account(0.3, 'bucket');
    const running = load(s, [a.key]);
    await eventually(() => running.answered.length >= 5, 30_000, '5 tasks created');
    const env = { DATA_DIR: s.db.dir, DATABASE_URL: s.db.url, ...s3.env };
    const began = Date.now();
    const made = await gengate(['backup', 's3:nightly'], env);
    await running.stop();
    expect(made.code, made.stderr).toBe(0);
    expect(made.stdout).toMatch(new RegExp(`^backup s3://${s3.bucket}/backups/nightly/: 1 accounts, \\d+ tasks, 0 files \\(the files stay in the bucket\\)`));
    await s.services.engine.stop();
    const dir = fresh();
    const restore = await gengate(['restore', 's3:nightly'], { ...s3.env, DATA_DIR: dir });
    expect(restore.code, restore.stderr).toBe(0);
    const restored = await checkRestored(
      dir,
      running.answered.filter((x) => x.at < began).map((x) => x.taskId),
      null,
    );
    await restored.close();
    // An unfinished or missing backup is refused, naming what is missing.
    const missing = await gengate(['restore', 's3:nope'], { ...s3.env, DATA_DIR: fresh() });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^gengate: restore: no backup nope there: its manifest\.json is missing/m);
  }, 240_000);

  it('on PostgreSQL it names pg_dump instead, and changes nothing', async () => {
    if (!process.env.TEST_DATABASE_URL) return;
    const db = await createTestDb('postgres');
    try {
      const r = await gengate(['backup'], { DATA_DIR: db.dir, DATABASE_URL: db.url });
      expect(r.code).toBe(1);
      expect(r.stderr).toBe(
        'gengate: DATABASE_URL is PostgreSQL: back it up with pg_dump (or continuous archiving for point-in-time recovery), see docs/operations.md "Back up and restore"\n',
      );
    } finally {
      await db.drop();
    }
  }, 240_000);
});
