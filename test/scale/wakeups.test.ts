import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { buildServices, type Services } from '../../src/services.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { FAST, create, eventually, info } from '../tasks/support.js';

const pg = !!process.env.TEST_DATABASE_URL;
const redisUrl = process.env.TEST_REDIS_URL;
if (!pg || !redisUrl) {
  process.stderr.write('\n*** NOTICE: TEST_DATABASE_URL or TEST_REDIS_URL is not set: wake-ups across processes are tested only in part ***\n\n');
}
const bridges = [...(pg ? (['postgres'] as const) : []), ...(pg && redisUrl ? (['redis'] as const) : [])];

it('SQLite (one process) relies on in-process signals only', async () => {
  const s = await startServer('sqlite');
  expect(s.services.wakeups.kind).toBe('local');
  await s.close();
});

/** An API process and a worker process (two sets of services in this process, each with its own connections). */
describe.each(bridges)('wake-ups through %s', (bridge) => {
  let api: TestServer;
  let worker: Services;
  const received: Array<[string, string]> = [];
  beforeAll(async () => {
    const env: Record<string, string> = bridge === 'redis' ? { REDIS_URL: redisUrl! } : {};
    api = await startServer('postgres', { ...FAST, ...env });
    // A worker that polls only once a minute: only a wake-up can make it take new work quickly.
    worker = await buildServices(loadConfig({ ...FAST, ...env, DATABASE_URL: api.db.url, DATA_DIR: api.db.dir, LOG_LEVEL: 'silent', ENGINE_POLL_MS: '60000' }));
    worker.tasks.signals.on('created', (id) => received.push(['created', id]));
    worker.tasks.signals.on('due', (id) => received.push(['due', id]));
    api.services.tasks.signals.on('finished', (id) => received.push(['finished', id]));
    api.services.tasks.signals.on('callbackDue', (id) => received.push(['callbackDue', id]));
    worker.engine.start();
  });
  afterAll(async () => {
    await worker?.close();
    await api?.close();
  });

  it('chooses the bridge', () => {
    expect(api.services.wakeups.kind).toBe(bridge);
    expect(worker.wakeups.kind).toBe(bridge);
  });

  it('a task created on the API process wakes the idle worker at once', async () => {
    await eventually(() => worker.engine.rounds >= 1, 15_000, "the worker's first (empty) claim round"); // it now sleeps 60 s
    const a = await api.account(1);
    const id = await create(api, a.key, 'seedream-flash', { prompt: 'wake up' });
    await eventually(async () => received.some(([e, t]) => e === 'created' && t === id));
    const t = await eventually(async () => {
      const now = await info(api, a.key, id);
      return now.state !== 'waiting' ? now : null;
    });
    expect(t.state).not.toBe('waiting');
  });

  it('an upstream notice received by the API process (due) reaches the worker', async () => {
    api.services.tasks.signals.emit('due', 'task-noticed');
    await eventually(async () => received.some(([e, t]) => e === 'due' && t === 'task-noticed'));
  });

  it('finished on the worker reaches the API process; a process does not hear its own messages twice', async () => {
    worker.tasks.signals.emit('finished', 'task-from-worker');
    await eventually(async () => received.some(([e, t]) => e === 'finished' && t === 'task-from-worker'));
    worker.tasks.signals.emit('callbackDue', 'task-with-callback');
    await eventually(async () => received.some(([e, t]) => e === 'callbackDue' && t === 'task-with-callback'));
    let echoes = 0;
    worker.tasks.signals.on('created', (id) => id === 'echo-check' && echoes++);
    worker.tasks.signals.emit('created', 'echo-check');
    api.services.tasks.signals.emit('created', 'after');
    await eventually(async () => received.some(([e, t]) => e === 'created' && t === 'after'));
    expect(echoes).toBe(1);
  });
});
