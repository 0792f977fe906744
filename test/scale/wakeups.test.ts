import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import pgLib from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { buildServices, type Services } from '../../src/services.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { needs } from '../helpers/tools.js';
import { FAST, create, eventually, info } from '../tasks/support.js';

const pg = needs('postgres');
const redisUrl = needs('redis') ? process.env.TEST_REDIS_URL : undefined;
const bridges = [...(pg ? (['postgres'] as const) : []), ...(pg && redisUrl ? (['redis'] as const) : [])];

it('SQLite (one process) relies on in-process signals only', async () => {
  const s = await startServer('sqlite');
  expect(s.services.wakeups.kind).toBe('local');
  await s.close();
});

/** An API process and a worker process (two sets of services in this process, each with its own connections). */
// Redis channels are shared by every process on that Redis (other test files running beside this one,
// other checkouts' runs): the ids carry a token of this run, and only messages naming them count.
const RUN = randomBytes(4).toString('hex');

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
    api.services.tasks.signals.emit('due', `task-noticed-${RUN}`);
    await eventually(async () => received.some(([e, t]) => e === 'due' && t === `task-noticed-${RUN}`));
  });

  it('finished on the worker reaches the API process; a process does not hear its own messages twice', async () => {
    worker.tasks.signals.emit('finished', `task-from-worker-${RUN}`);
    await eventually(async () => received.some(([e, t]) => e === 'finished' && t === `task-from-worker-${RUN}`));
    worker.tasks.signals.emit('callbackDue', `task-with-callback-${RUN}`);
    await eventually(async () => received.some(([e, t]) => e === 'callbackDue' && t === `task-with-callback-${RUN}`));
    let echoes = 0;
    worker.tasks.signals.on('created', (id) => id === `echo-check-${RUN}` && echoes++);
    worker.tasks.signals.emit('created', `echo-check-${RUN}`);
    api.services.tasks.signals.emit('created', `after-${RUN}`);
    await eventually(async () => received.some(([e, t]) => e === 'created' && t === `after-${RUN}`));
    expect(echoes).toBe(1);
  });
});

describe.each(bridges)('wake-ups in bulk through %s', (bridge) => {
  it('the signals of one moment go out together and every one arrives', async () => {
    const env: Record<string, string> = bridge === 'redis' ? { REDIS_URL: redisUrl! } : {};
    const api = await startServer('postgres', { ...FAST, ...env });
    const worker = await buildServices(loadConfig({ ...FAST, ...env, DATABASE_URL: api.db.url, DATA_DIR: api.db.dir, LOG_LEVEL: 'silent' }));
    try {
      const heard = new Set<string>();
      worker.tasks.signals.on('due', (id) => id.startsWith(`tk_bulk_${RUN}_`) && heard.add(id));
      // The raw messages on the channel that carry this run's ids, counted by a listener of our own.
      let messages = 0;
      const ours = (m: string) => m.includes(`tk_bulk_${RUN}_`) && messages++;
      let closeRaw: () => Promise<unknown>;
      if (bridge === 'redis') {
        const sub = new Redis(redisUrl!);
        await sub.subscribe('gengate_wake');
        sub.on('message', (_channel: string, m: string) => ours(m));
        closeRaw = async () => sub.disconnect();
      } else {
        const c = new pgLib.Client({ connectionString: api.db.url });
        await c.connect();
        await c.query('listen gengate_wake');
        c.on('notification', (n) => ours(n.payload ?? ''));
        closeRaw = () => c.end();
      }
      // More than one message holds (100 lines each), sent in one turn of the event loop.
      const ids = Array.from({ length: 250 }, (_, i) => `tk_bulk_${RUN}_${i}`);
      for (const id of ids) api.services.tasks.signals.emit('due', id);
      await eventually(async () => heard.size === ids.length, 10_000, `${heard.size} of ${ids.length} heard`);
      expect([...heard].sort()).toEqual([...ids].sort());
      await closeRaw();
      expect(messages, 'NOTIFY/PUBLISH messages for 250 signals').toBeGreaterThan(0);
      expect(messages, 'NOTIFY/PUBLISH messages for 250 signals').toBeLessThanOrEqual(5);
    } finally {
      await worker.close();
      await api.close();
    }
  });
});
