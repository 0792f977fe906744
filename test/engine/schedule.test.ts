import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { UNLIMITED, create, info } from '../tasks/support.js';

/**
 * The engine looks at a task when its backend says something will have changed, not every poll
 * interval: the local backend knows when queuing ends and reports progress about once a second.
 */
describe.each(dialects())('engine scheduling with backend hints on %s', (dialect) => {
  let s: TestServer;
  let now = 1_800_000_000_000;
  beforeAll(async () => {
    const env = { ...UNLIMITED, LOCAL_QUEUE_MS: '400', LOCAL_GENERATE_MS: '1500', ENGINE_POLL_MS: '20', ENGINE_CONCURRENCY: '1' };
    s = await startServer(dialect, env, undefined, { clock: { now: () => now } });
  });
  afterAll(() => s.close());

  const runAt = async (id: string) =>
    Number((await s.services.database.db.selectFrom('tasks').select('run_at').where('id', '=', id).executeTakeFirstOrThrow()).run_at);

  it('steps a task once per state change and progress tick, at the times the backend names', async () => {
    const a = await s.account(1);
    const id = await create(s, a.key, 'google/nano-banana', { prompt: 'a kite' });
    const steps: Array<{ state: string; progress: number; nextLookIn: number }> = [];
    const step = async (advance: number) => {
      now += advance;
      expect(await s.services.engine.tick()).toBe(1);
      const t = await info(s, a.key, id);
      steps.push({ state: t.state, progress: t.progress, nextLookIn: t.state === 'success' ? 0 : (await runAt(id)) - now });
    };
    await step(0); // hand-off
    await step(20); // still queued: look again when queuing ends
    expect(await s.services.engine.tick()).toBe(0); // nothing due in between
    await step(380); // generating
    await step(1000); // progress tick
    await step(500); // done
    expect(steps).toEqual([
      { state: 'queuing', progress: 0, nextLookIn: 20 },
      { state: 'queuing', progress: 0, nextLookIn: 380 },
      { state: 'generating', progress: 0, nextLookIn: 1000 },
      { state: 'generating', progress: 66, nextLookIn: 500 },
      { state: 'success', progress: 100, nextLookIn: 0 },
    ]);
  });
});
