import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { create, FAST, MovableClock, settle } from '../tasks/support.js';

const ADMIN = 'admin-token-for-operator-views-0123';

/** The admin reads behind the operator's console pages (decision 2002): all tasks with flags, the dashboard series, members. */
describe.each(dialects())('operator views of the admin API on %s', (dialect) => {
  const clock = new MovableClock();
  let s: TestServer;
  let a: { id: string; key: string };
  let b: { id: string; key: string };
  const admin = (path: string) => s.call('GET', `/admin/v1${path}`, { headers: { authorization: `Bearer ${ADMIN}` } });

  beforeAll(async () => {
    s = await startServer(dialect, { ...FAST, ADMIN_TOKEN: ADMIN }, undefined, { clock });
    a = await s.account(10, 'alpha');
    b = await s.account(10, 'beta');
  });
  afterAll(() => s.close());

  it('lists every account’s tasks with filters, and finds stuck, leased and failed-over tasks', async () => {
    const t1 = await create(s, a.key, 'google/nano-banana', { prompt: 'one' });
    const t2 = await create(s, b.key, 'google/nano-banana', { prompt: 'two' });
    const t3 = await create(s, b.key, 'google/nano-banana', { prompt: 'three' });
    // The engine is not running: all three wait.
    const all = await admin('/tasks');
    expect(all.status).toBe(200);
    expect(all.body.data.items.map((t: { taskId: string }) => t.taskId)).toEqual([t3, t2, t1]);
    expect(all.body.data.items[2]).toMatchObject({
      accountId: a.id,
      state: 'waiting',
      price: expect.stringMatching(/^\d+\.\d{6}$/),
      stuck: false,
      leased: false,
    });
    expect((await admin(`/tasks?accountId=${b.id}`)).body.data.items.map((t: { taskId: string }) => t.taskId)).toEqual([t3, t2]);
    const paged = await admin('/tasks?limit=2');
    expect(paged.body.data.items).toHaveLength(2);
    expect((await admin(`/tasks?limit=2&before=${paged.body.data.nextBefore}`)).body.data.items.map((t: { taskId: string }) => t.taskId)).toEqual([t1]);
    expect((await admin('/tasks?flag=stuck')).body.data.items).toEqual([]);
    expect((await admin('/dashboard')).body.data.active).toEqual([{ model: 'google/nano-banana', routeIndex: 0, state: 'waiting', count: 3 }]);

    const now = clock.now();
    await s.services.database.tx(async (trx) => {
      await trx
        .updateTable('tasks')
        .set({ locked_until: now + 60_000, locked_by: 'worker-x' })
        .where('id', '=', t2)
        .execute();
      await trx.updateTable('tasks').set({ route_index: 1 }).where('id', '=', t3).execute();
    });
    expect((await admin('/tasks?flag=leased')).body.data.items.map((t: { taskId: string; lockedBy: string }) => [t.taskId, t.lockedBy])).toEqual([
      [t2, 'worker-x'],
    ]);
    expect((await admin('/tasks?flag=failed_over')).body.data.items.map((t: { taskId: string }) => t.taskId)).toEqual([t3]);
    clock.advance(25 * 60_000); // past the 20-minute deadline, still not final
    const stuck = await admin('/tasks?flag=stuck');
    expect(stuck.body.data.items.map((t: { taskId: string }) => t.taskId)).toEqual([t3, t2, t1]);
    expect(stuck.body.data.items.every((t: { stuck: boolean }) => t.stuck)).toBe(true);
    clock.advance(-25 * 60_000);
    await s.services.database.tx(async (trx) => {
      await trx.updateTable('tasks').set({ locked_until: null, locked_by: null }).where('id', '=', t2).execute();
    });
  });

  it('refuses a bad filter naming the parameter and the allowed values, and an unknown one', async () => {
    const bad = await admin('/tasks?flag=lost');
    expect(bad.status).toBe(400);
    expect(bad.body.msg).toContain('flag');
    expect(bad.body.msg).toContain('stuck, leased, failed_over');
    expect((await admin('/tasks?state=done')).status).toBe(400);
    expect((await admin('/tasks?status=fail')).status).toBe(400);
    expect((await admin('/dashboard?minutes=2')).status).toBe(400);
  });

  it('gives per-minute series from the database: tasks by outcome, failures by code, in flight, money exactly the ledger’s', async () => {
    s.services.engine.start();
    const ids = (await admin('/tasks')).body.data.items.map((t: { taskId: string }) => t.taskId) as string[];
    for (const id of ids) await settle(s, id === ids[2] ? a.key : b.key, id);
    const cancelled = await create(s, a.key, 'seedance-2.0-fast', { prompt: 'never mind', duration: 4 });
    await s.call('POST', '/api/v1/jobs/cancel', { key: a.key, body: { taskId: cancelled } });
    const failed = await settle(s, a.key, cancelled);
    expect(failed.state).toBe('fail');

    const d = (await admin('/dashboard?minutes=10')).body.data;
    expect(d.minutes).toHaveLength(10);
    expect(d.minutes[1] - d.minutes[0]).toBe(60_000);
    const sum = (xs: number[]) => xs.reduce((x, y) => x + y, 0);
    expect(sum(d.tasks.created)).toBe(4);
    expect(sum(d.tasks.succeeded)).toBe(3);
    expect(sum(d.tasks.failed)).toBe(1);
    expect(Object.keys(d.failuresByCode)).toEqual([String(failed.failCode)]);
    expect(d.inFlight[9]).toBe(0);
    expect(d.now).toEqual({ waiting: 0, queuing: 0, generating: 0 });
    expect(d.active).toEqual([]);
    const entries = await s.services.database.db.selectFrom('ledger_entries').select(['kind', 'amount_micros']).execute();
    const total = (kinds: string[]) => entries.filter((e) => kinds.includes(e.kind)).reduce((x, e) => x + Number(e.amount_micros), 0);
    expect(sum(d.money.chargedMicros)).toBe(-total(['charge']));
    expect(sum(d.money.refundedMicros)).toBe(total(['refund', 'partial_refund']));
    expect(sum(d.money.refundedMicros)).toBeGreaterThan(0);
  });

  it('lists an account’s members; 404 for an unknown account', async () => {
    await s.services.members.create(a.id, 'owner@alpha.example', 'owner', 'a long password 1');
    const m = await admin(`/accounts/${a.id}/members`);
    expect(m.status).toBe(200);
    expect(m.body.data.map((x: { email: string; role: string }) => [x.email, x.role])).toEqual([['owner@alpha.example', 'owner']]);
    expect((await admin('/accounts/acc_nope/members')).status).toBe(404);
  });
});

describe('without ADMIN_TOKEN', () => {
  it('has no admin API (404 "no route", which the operator pages turn into "set ADMIN_TOKEN")', async () => {
    const s = await startServer('sqlite');
    try {
      const r = await s.call('GET', '/admin/v1/tasks');
      expect(r.status).toBe(404);
      expect(r.body.msg).toMatch(/^no route GET \/admin\/v1\/tasks/);
    } finally {
      await s.close();
    }
  });
});
