import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CallbacksTable } from '../../src/store/schema.js';
import { FinalViews, unchangedUntil } from '../../src/tasks/final-views.js';
import type { TaskRow } from '../../src/tasks/view.js';
import { dialects } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { FAST, MovableClock, create, info, settle } from './support.js';

const row = (patch: Partial<TaskRow & { files_expire_at: number | null }>) =>
  ({ state: 'success', callback_url: null, files_expired: 0, files_expire_at: 5_000, ...patch }) as TaskRow & { files_expire_at: number | null };
const callback = (status: CallbacksTable['status']) => ({ status }) as CallbacksTable;

describe('what a finished task view may be kept for', () => {
  it('never for a running task or while a callback is still being delivered', () => {
    for (const state of ['waiting', 'queuing', 'generating'] as const) expect(unchangedUntil(row({ state }), null)).toBe(0);
    expect(unchangedUntil(row({ callback_url: 'https://x.test/cb' }), callback('pending'))).toBe(0);
    expect(unchangedUntil(row({ callback_url: 'https://x.test/cb' }), null)).toBe(0);
  });

  it('until its files expire (success), or for good (failed, expired files, settled callback)', () => {
    expect(unchangedUntil(row({}), null)).toBe(5_000);
    expect(unchangedUntil(row({ callback_url: 'https://x.test/cb' }), callback('delivered'))).toBe(5_000);
    expect(unchangedUntil(row({ files_expired: 1 }), null)).toBe(Infinity);
    expect(unchangedUntil(row({ state: 'fail', files_expire_at: null }), null)).toBe(Infinity);
    expect(unchangedUntil(row({ state: 'fail', callback_url: 'https://x.test/cb' }), callback('failed'))).toBe(Infinity);
  });

  it('answers only the owning account, only until the view may change, within its byte budget', () => {
    const views = new FinalViews(100);
    views.put('tk_1', 'acc_a', '{"a":1}', 50, 10);
    expect(views.get('tk_1', 'acc_a', 49)).toBe('{"a":1}');
    expect(views.get('tk_1', 'acc_b', 49)).toBeUndefined();
    expect(views.get('tk_1', 'acc_a', 50)).toBeUndefined();
    expect(views.size).toBe(0);
    views.put('tk_2', 'acc_a', 'x'.repeat(60), Infinity, 10);
    views.put('tk_3', 'acc_a', 'y'.repeat(60), Infinity, 10);
    expect(views.get('tk_2', 'acc_a', 10)).toBeUndefined();
    expect(views.get('tk_3', 'acc_a', 10)).toBe('y'.repeat(60));
    views.put('tk_4', 'acc_a', '{}', 10, 10);
    expect(views.get('tk_4', 'acc_a', 10)).toBeUndefined();
  });
});

/**
 * recordInfo answers a finished task from memory. To see that it does, each test changes the row
 * behind GenGate's back (nothing in GenGate changes a finished task that way): a kept view still
 * shows the old value, a view that may change shows the new one.
 */
describe.each(dialects())('recordInfo of finished tasks on %s', (dialect) => {
  let s: TestServer;
  const clock = new MovableClock();
  beforeAll(async () => {
    s = await startServer(dialect, { ...FAST, ALLOW_PRIVATE_NETWORK: 'true', CALLBACK_RETRY_DELAYS_MS: '600000' }, undefined, { clock });
    s.services.engine.start();
  });
  afterAll(() => s.close());

  const tamper = (id: string, param: string) => s.services.database.tx((w) => w.updateTable('tasks').set({ param }).where('id', '=', id).execute());

  it('keeps a finished view until the files expire, then reads again and shows the sweep', async () => {
    const a = await s.account(1);
    const b = await s.account(1);
    const id = await create(s, a.key, 'google/nano-banana', { prompt: 'a kite' });
    const done = await settle(s, a.key, id);
    await tamper(id, 'tampered');
    expect(await info(s, a.key, id)).toEqual(done);
    // Kept per account: another key still gets 404.
    expect((await s.call('GET', `/api/v1/jobs/recordInfo?taskId=${id}`, { key: b.key })).status).toBe(404);
    clock.advance(24 * 3_600_000 + 1);
    expect((await info(s, a.key, id)).param).toBe('tampered');
    await s.services.engine.tick();
    const expired = await info(s, a.key, id);
    expect(expired).toMatchObject({ filesExpired: true, param: 'tampered' });
    expect(expired.updateTime).toBeGreaterThan(done.updateTime);
  });

  it('reads a task whose callback is still pending from the database every time', async () => {
    const a = await s.account(1);
    // A callback URL nothing answers (a closed port on this host); the next try is far off, so delivery stays pending.
    const id = await create(s, a.key, 'google/nano-banana', { prompt: 'a kite' }, { callBackUrl: 'http://127.0.0.1:9/cb' });
    const done = await settle(s, a.key, id);
    expect(done.callback).toMatchObject({ status: 'pending' });
    await tamper(id, 'tampered');
    expect((await info(s, a.key, id)).param).toBe('tampered');
  });

  it('reads a running task from the database every time', async () => {
    await s.services.engine.stop();
    const a = await s.account(1);
    const id = await create(s, a.key, 'google/nano-banana', { prompt: 'a kite' });
    expect((await info(s, a.key, id)).state).toBe('waiting');
    await tamper(id, 'tampered');
    expect((await info(s, a.key, id)).param).toBe('tampered');
  });
});
