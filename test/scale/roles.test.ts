import type { ChildProcess } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { buildServices } from '../../src/services.js';
import { MICROS_PER_USD } from '../../src/billing/index.js';
import { gengate, spawnServe, stop } from '../helpers/cli.js';
import { createTestDb, type TestDb } from '../helpers/db.js';
import { UNLIMITED } from '../tasks/support.js';

/** `gengate serve --role`: real processes over one SQLite file (no wake-up bridge there: the worker polls). */
describe('gengate serve --role', () => {
  let db: TestDb;
  const children: ChildProcess[] = [];
  afterEach(async () => {
    for (const c of children.splice(0)) await stop(c, 'SIGKILL');
    await db?.drop();
  });
  const env = () => ({ DATA_DIR: db.dir, DATABASE_URL: db.url, FIRST_RUN_ACCOUNT: 'false', ENGINE_POLL_MS: '50', LOCAL_QUEUE_MS: '0', LOCAL_GENERATE_MS: '0', MODERATION_IMAGES: 'off', ...UNLIMITED });
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
  });

  it('api takes tasks and runs none; a worker (health and metrics only) runs them', async () => {
    db = await createTestDb('sqlite');
    const setup = await buildServices(loadConfig(env()));
    const { apiKey } = await setup.accounts.create('roles', MICROS_PER_USD);
    await setup.close();
    const api = await serve(['--role', 'api']);
    expect(api.output()).toMatch(/role: api/);
    const auth = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
    const created = await fetch(`${api.url}/api/v1/jobs/createTask`, { method: 'POST', headers: auth, body: JSON.stringify({ model: 'seedream-flash', input: { prompt: 'roles' } }) });
    const taskId = ((await created.json()) as any).data.taskId as string;
    const state = async () => ((await (await fetch(`${api.url}/api/v1/jobs/recordInfo?taskId=${taskId}`, { headers: auth })).json()) as any).data.state as string;
    // Many engine poll intervals pass: nobody takes the task.
    await new Promise((r) => setTimeout(r, 1_000));
    expect(await state()).toBe('waiting');

    const worker = await serve(['--role', 'worker'], { ROLE: 'api' }); // the flag wins over the setting
    expect(worker.output()).toMatch(/worker \(health and metrics only\) listening on .*role: worker/);
    expect((await fetch(`${worker.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${worker.url}/readyz`)).status).toBe(200);
    expect((await fetch(`${worker.url}/metrics`)).status).toBe(200);
    expect((await fetch(`${worker.url}/api/v1/models`)).status).toBe(404);
    const end = Date.now() + 30_000;
    while ((await state()) !== 'success' && Date.now() < end) await new Promise((r) => setTimeout(r, 100));
    expect(await state()).toBe('success');
  }, 60_000);
});
