import type { ChildProcess } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { buildServices } from '../../src/services.js';
import { MICROS_PER_USD } from '../../src/billing/index.js';
import { gengate, spawnServe, stop } from '../helpers/cli.js';
import { createTestDb, type TestDb } from '../helpers/db.js';
import { migrate, openDatabase } from '../../src/store/index.js';
import { UNLIMITED, eventually } from '../tasks/support.js';

/** `gengate serve --role`: real processes over one SQLite file (no wake-up bridge there: the worker polls). */
describe('gengate serve --role', () => {
  let db: TestDb;
  const children: ChildProcess[] = [];
  afterEach(async () => {
    for (const c of children.splice(0)) await stop(c, 'SIGKILL');
    await db?.drop();
  });
  const env = () => ({
    DATA_DIR: db.dir,
    DATABASE_URL: db.url,
    FIRST_RUN_ACCOUNT: 'false',
    ENGINE_POLL_MS: '50',
    LOCAL_QUEUE_MS: '0',
    LOCAL_GENERATE_MS: '0',
    MODERATION_IMAGES: 'off',
    ...UNLIMITED,
  });
  const serve = async (args: string[], extra: Record<string, string> = {}) => {
    const p = await spawnServe({ ...env(), ...extra }, args);
    children.push(p.child);
    return p;
  };

  it('refuses an unknown role with the allowed values', async () => {
    db = await createTestDb('sqlite');
    const r = await gengate(['serve', '--role', 'both'], env());
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/ROLE: .*"api".*"worker".*"all".*got "both"/);
    const clash = await gengate(['serve', '--role', 'worker'], { ...env(), RUN_ENGINE: 'false' });
    expect(clash.code).toBe(2);
    expect(clash.stderr).toMatch(/RUN_ENGINE: cannot be false with ROLE=worker/);
  }, 240_000); // several runs of the real CLI or server, each a new process loading the sources: slow on a busy machine

  it('a worker refuses a database a newer GenGate migrated, saying so, and exits 2', async () => {
    db = await createTestDb('sqlite');
    const database = openDatabase(db.url);
    await migrate(database);
    await database.tx((trx) => trx.insertInto('gengate_migrations').values({ version: 999, name: 'from the future', applied_at: 1 }).execute());
    await database.close();
    const r = await gengate(['serve', '--role', 'worker'], env());
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /^gengate: the database was migrated by a newer GenGate: migration 999 \(from the future\) is unknown to this version.*run it as ROLE=api/m,
    );
  }, 240_000);

  it('api takes tasks and runs none; a worker (health and metrics only) runs them', async () => {
    db = await createTestDb('sqlite');
    const setup = await buildServices(loadConfig(env()));
    const { apiKey } = await setup.accounts.create('roles', MICROS_PER_USD);
    await setup.close();
    const api = await serve(['--role', 'api']);
    expect(api.output()).toMatch(/role: api/);
    const auth = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
    const created = await fetch(`${api.url}/api/v1/jobs/createTask`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ model: 'seedream-flash', input: { prompt: 'roles' } }),
    });
    const taskId = ((await created.json()) as any).data.taskId as string;
    const state = async () =>
      ((await (await fetch(`${api.url}/api/v1/jobs/recordInfo?taskId=${taskId}`, { headers: auth })).json()) as any).data.state as string;
    expect(await state()).toBe('waiting');

    const worker = await serve(['--role', 'worker'], { ROLE: 'api' }); // the flag wins over the setting
    expect(worker.output()).toMatch(/worker \(health and metrics only\) listening on .*role: worker/);
    expect((await fetch(`${worker.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${worker.url}/readyz`)).status).toBe(200);
    expect((await fetch(`${worker.url}/metrics`)).status).toBe(200);
    expect((await fetch(`${worker.url}/api/v1/models`)).status).toBe(404);
    await eventually(async () => (await state()) === 'success', 30_000, 'the worker to run the task');
    // The task was due on the API process, whose engine (had it one) was woken by the creation, long
    // before the worker started: yet the worker's submit counter has it, the API process's has none.
    const submits = async (url: string) =>
      (await (await fetch(`${url}/metrics`)).text()).match(/^gengate_route_submits_total\{route="local",outcome="accepted"\} (\d+)$/m)?.[1];
    expect(await submits(worker.url)).toBe('1');
    expect(await submits(api.url)).toBeUndefined();
  }, 240_000);
});
