import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { buildServices, type Services } from '../../src/services.js';
import { waitForTask } from '../../src/tasks/index.js';
import { dialects } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { FAST, MovableClock, create, eventually, info } from './support.js';

/** A generation of 10 minutes on a clock the test moves: the task ends when the test says so. */
const SLOW = { ...FAST, LOCAL_GENERATE_MS: '600000' };
const INPUT = { prompt: 'a lighthouse at dusk' };

describe.each(dialects())('waitForTask on %s', (dialect) => {
  // An API process that runs no engine, and a worker (its own services, connections and signals) that does.
  let api: TestServer;
  let worker: Services;
  const clock = new MovableClock();
  let key: string;
  beforeAll(async () => {
    api = await startServer(dialect, SLOW, undefined, { clock });
    worker = await buildServices(loadConfig({ ...SLOW, DATABASE_URL: api.db.url, DATA_DIR: api.db.dir, LOG_LEVEL: 'silent' }), { clock });
    worker.engine.start();
    key = (await api.account(10)).key;
  });
  afterAll(async () => {
    await worker?.close();
    await api?.close();
  });

  const generating = async (id: string) => {
    let last = '';
    await eventually(
      async () => {
        last = JSON.stringify(await info(api, key, id));
        return JSON.parse(last).state === 'generating';
      },
      15_000,
      () => `${id} generating; it is ${last}`,
    );
  };

  it('ends when the worker (another set of services) finishes the task, and leaves nothing behind', async () => {
    const id = await create(api, key, 'seedream-flash', INPUT);
    await generating(id);
    const listeners = api.services.tasks.signals.listenerCount('finished');
    const waited = waitForTask(api.services, id, 60_000);
    expect(api.services.tasks.waiters.size).toBe(1);
    expect(api.services.tasks.signals.listenerCount('finished')).toBe(listeners + 1);
    clock.advance(600_000);
    expect(await waited).toBe(true);
    expect((await info(api, key, id)).state).toBe('success');
    expect(api.services.tasks.waiters.size).toBe(0);
    expect(api.services.tasks.signals.listenerCount('finished')).toBe(listeners);
  });

  it('a task already final ends the wait at once', async () => {
    const id = await create(api, key, 'seedream-flash', INPUT);
    await generating(id);
    clock.advance(600_000);
    await eventually(async () => (await info(api, key, id)).state === 'success');
    expect(await waitForTask(api.services, id, 60_000)).toBe(true);
  });

  it('a final state written with no signal at all (SQLite beside a worker, a lost notice) is found by the shared check', async () => {
    const id = await create(api, key, 'seedream-flash', INPUT);
    await generating(id);
    const waited = waitForTask(api.services, id, 60_000);
    // As another process would, but its signal never comes: only the shared check can see it.
    await api.services.database.tx((w) => w.updateTable('tasks').set({ state: 'fail' }).where('id', '=', id).execute(), { atomic: false });
    expect(await waited).toBe(true);
  });

  it('many waits for one task and for others share the signal and end together', async () => {
    const ids = [await create(api, key, 'seedream-flash', INPUT), await create(api, key, 'seedream-flash', INPUT)];
    for (const id of ids) await generating(id);
    const waits = [...ids, ...ids, ...ids].map((id) => waitForTask(api.services, id, 60_000));
    expect(api.services.tasks.waiters.size).toBe(2);
    clock.advance(600_000);
    expect(await Promise.all(waits)).toEqual([true, true, true, true, true, true]);
    expect(api.services.tasks.waiters.size).toBe(0);
  });

  it('answers false when the time runs out or the signal aborts; the task runs on', async () => {
    const id = await create(api, key, 'seedream-flash', INPUT);
    await generating(id);
    expect(await waitForTask(api.services, id, 1)).toBe(false);
    const stop = new AbortController();
    const aborted = waitForTask(api.services, id, 60_000, stop.signal);
    stop.abort();
    expect(await aborted).toBe(false);
    expect(await waitForTask(api.services, id, 60_000, stop.signal)).toBe(false);
    expect(await waitForTask(api.services, id, 0)).toBe(false);
    expect(api.services.tasks.waiters.size).toBe(0);
    expect((await info(api, key, id)).state).toBe('generating');
    clock.advance(600_000);
    expect(await waitForTask(api.services, id, 60_000)).toBe(true);
  });
});
