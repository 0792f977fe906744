import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { UNLIMITED, create, info } from './support.js';

const FIXED = Date.UTC(2026, 0, 2, 3, 4, 5, 678);

describe.each(dialects())('recordInfo and list on %s', (dialect) => {
  let s: TestServer;
  beforeAll(async () => {
    // A stopped clock: every task shares one millisecond, the hard case for paging.
    s = await startServer(dialect, { ...UNLIMITED, RUN_ENGINE: 'false', ERROR_STYLE: 'default' }, undefined, { clock: { now: () => FIXED } });
  });
  afterAll(() => s.close());

  it('recordInfo shows every Task field of a fresh task', async () => {
    const a = await s.account(5);
    const id = await create(s, a.key, 'seedance-2.0-fast', { prompt: 'waves', return_last_frame: true });
    expect(await info(s, a.key, id)).toEqual({
      taskId: id,
      task_id: id,
      model: 'seedance-2.0-fast',
      state: 'waiting',
      status: 'pending',
      param: JSON.stringify({ model: 'seedance-2.0-fast', input: { prompt: 'waves', return_last_frame: true } }),
      resultJson: null,
      lastFrameUrl: null,
      failCode: '',
      failMsg: '',
      error: null,
      costTime: null,
      createTime: FIXED,
      updateTime: FIXED,
      completeTime: null,
      progress: 0,
      creditsConsumed: 0.56,
      costUsd: '0.560',
      costRub: 50.4,
      refunded: false,
      filesExpired: false,
      callback: null,
    });
  });

  it('recordInfo: 422 without taskId, 404 for unknown and for another account, 401 without key', async () => {
    const a = await s.account(1);
    const b = await s.account(1);
    const id = await create(s, a.key, 'suno-v6', { prompt: 'x' });
    const missing = await s.call('GET', '/api/v1/jobs/recordInfo', { key: a.key });
    expect(missing.status).toBe(422);
    expect(missing.body).toMatchObject({ code: 422, error: 'validation_error', data: null });
    expect(missing.body.msg).toBe('taskId is required; pass ?taskId=<the taskId createTask returned>');
    expect((await s.call('GET', '/api/v1/jobs/recordInfo?taskId=', { key: a.key })).status).toBe(422);
    const twice = await s.call('GET', `/api/v1/jobs/recordInfo?taskId=${id}&taskId=${id}`, { key: a.key });
    expect(twice.body).toEqual({ code: 400, error: 'invalid_request_error', data: null, msg: `taskId must be given once (got ${JSON.stringify([id, id])})` });
    for (const [key, taskId] of [
      [a.key, 'tk_nope'],
      [b.key, id],
    ] as const) {
      const r = await s.call('GET', `/api/v1/jobs/recordInfo?taskId=${taskId}`, { key });
      expect(r.status).toBe(404);
      expect(r.body).toMatchObject({ code: 404, error: 'task_not_found', data: null });
    }
    expect((await s.call('GET', `/api/v1/jobs/recordInfo?taskId=${id}`)).status).toBe(401);
    const writer = await s.services.accounts.createKey(a.id, { scopes: ['tasks:write'] });
    expect((await s.call('GET', `/api/v1/jobs/recordInfo?taskId=${id}`, { key: writer.apiKey })).status).toBe(403);
  });

  it('list pages newest first with nextBefore, without gaps or repeats when tasks share a millisecond', async () => {
    const a = await s.account(10);
    const ids: string[] = [];
    for (let i = 0; i < 23; i++) ids.push(await create(s, a.key, 'suno-v6', { prompt: `song ${i}` }));
    const seen: string[] = [];
    let before: number | null = null;
    let pages = 0;
    do {
      const q: string = `/api/v1/jobs/list?limit=5${before === null ? '' : `&before=${before}`}`;
      const r = await s.call('GET', q, { key: a.key });
      expect(r.status).toBe(200);
      seen.push(...r.body.data.items.map((t: { taskId: string }) => t.taskId));
      before = r.body.data.nextBefore;
      pages++;
    } while (before !== null);
    expect(pages).toBe(5);
    expect(seen).toEqual([...ids].reverse());
  });

  it("list: default limit 20, state filter, only the account's tasks", async () => {
    const a = await s.account(10);
    const b = await s.account(10);
    for (let i = 0; i < 21; i++) await create(s, a.key, 'suno-v6', { prompt: 'x' });
    await create(s, b.key, 'suno-v6', { prompt: 'theirs' });
    const first = await s.call('GET', '/api/v1/jobs/list', { key: a.key });
    expect(first.body.data.items).toHaveLength(20);
    expect(first.body.data.nextBefore).toEqual(expect.any(Number));
    expect(first.body.data.items.every((t: { param: string }) => !t.param.includes('theirs'))).toBe(true);
    const waiting = await s.call('GET', '/api/v1/jobs/list?state=waiting&limit=100', { key: a.key });
    expect(waiting.body.data).toMatchObject({ nextBefore: null });
    expect(waiting.body.data.items).toHaveLength(21);
    expect((await s.call('GET', '/api/v1/jobs/list?state=success', { key: a.key })).body.data).toEqual({ items: [], nextBefore: null });
  });

  it('list refuses a bad query with the envelope', async () => {
    const a = await s.account(1);
    for (const q of ['limit=0', 'limit=101', 'limit=abc', 'limit=2.5', 'state=done', 'before=-1', 'before=x']) {
      const r = await s.call('GET', `/api/v1/jobs/list?${q}`, { key: a.key });
      expect(r.status, q).toBe(400);
      expect(r.body).toMatchObject({ code: 400, error: 'invalid_request_error', data: null });
    }
    expect((await s.call('GET', '/api/v1/jobs/list')).status).toBe(401);
  });
});
