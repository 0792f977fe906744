import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { MovableClock, UNLIMITED, create, expectLedgerInvariant, info, taskEntries } from './support.js';

const IMAGE = { model: 'nano-banana-2', input: { prompt: 'a red fox', resolution: '2K' } };

describe.each(dialects())('POST /jobs/createTask on %s', (dialect) => {
  let s: TestServer;
  const clock = new MovableClock();
  beforeAll(async () => {
    s = await startServer(dialect, { ...UNLIMITED, RUN_ENGINE: 'false' }, undefined, { clock });
  });
  afterAll(() => s.close());

  const post = (key: string | undefined, body: unknown, headers: Record<string, string> = {}) =>
    s.call('POST', '/api/v1/jobs/createTask', { ...(key ? { key } : {}), body, headers });
  const balance = async (key: string) => (await s.call('GET', '/api/v1/user/balance', { key })).body.data.balance as string;

  it('charges the list price and answers taskId, task_id and status submitted', async () => {
    const a = await s.account(1);
    const r = await post(a.key, IMAGE);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ code: 200, msg: 'success', data: { taskId: expect.any(String), task_id: r.body.data.taskId, status: 'submitted' } });
    expect(r.body.data.taskId).toMatch(/^tk_[0-9a-z]{8}[A-Za-z0-9_-]{22}$/);
    expect(await balance(a.key)).toBe('0.9400');
    expect(await taskEntries(s, r.body.data.taskId)).toEqual({ charge: -60_000 });
    const t = await info(s, a.key, r.body.data.taskId);
    expect(t).toMatchObject({ state: 'waiting', status: 'pending', model: 'nano-banana-2', costUsd: '0.060', creditsConsumed: 0.06, progress: 0 });
    expect(JSON.parse(t.param)).toEqual(IMAGE);
  });

  it('reports the canonical model id for an alias', async () => {
    const a = await s.account(1);
    const id = await create(s, a.key, 'vendor/nano-banana', { prompt: 'x' });
    expect((await info(s, a.key, id)).model).toBe('google/nano-banana');
  });

  it('refuses bad bodies with the envelope and charges nothing', async () => {
    const a = await s.account(1);
    const cases: Array<[unknown, number, string, RegExp]> = [
      [{ input: { prompt: 'x' } }, 422, 'validation_error', /model is required/],
      [{ model: 'nope', input: {} }, 400, 'unsupported_model', /model must be one of .*got "nope"/],
      [{ model: 'suno-v6' }, 422, 'validation_error', /input is required/],
      [{ ...IMAGE, callBackUrl: 'ftp://example.com/x' }, 400, 'invalid_request_error', /callBackUrl.*http/],
      [{ ...IMAGE, callbackUrl: 'https://example.com/x' }, 400, 'invalid_request_error', /did you mean callBackUrl/],
      [{ model: 'nano-banana-2', input: { prompt: 'x', resolution: '8K' } }, 400, 'invalid_request_error', /input\.resolution/],
      [[1, 2], 400, 'invalid_request_error', /JSON object/],
    ];
    for (const [body, status, error, msg] of cases) {
      const r = await post(a.key, body);
      expect(r.status, JSON.stringify(body)).toBe(status);
      expect(r.body).toMatchObject({ code: status, error, data: null });
      expect(r.body.msg).toMatch(msg);
    }
    expect(await balance(a.key)).toBe('1.0000');
    expect((await s.call('GET', '/api/v1/jobs/list', { key: a.key })).body.data.items).toEqual([]);
  });

  it('needs a key with tasks:write and a model the key allows', async () => {
    expect((await post(undefined, IMAGE)).status).toBe(401);
    const a = await s.account(1);
    const reader = await s.services.accounts.createKey(a.id, { scopes: ['tasks:read'] });
    expect((await post(reader.apiKey, IMAGE)).body).toMatchObject({ code: 403, error: 'permission_error' });
    const musicOnly = await s.services.accounts.createKey(a.id, { models: ['suno-v6'] });
    const r = await post(musicOnly.apiKey, IMAGE);
    expect(r.body).toMatchObject({ code: 403, error: 'permission_error' });
    expect(r.body.msg).toContain('nano-banana-2');
    expect((await post(musicOnly.apiKey, { model: 'suno-v6', input: { prompt: 'a song' } })).status).toBe(200);
  });

  it('answers 402 with balance, required, currency and topUpUrl, and creates nothing', async () => {
    const a = await s.account(0.05);
    const r = await post(a.key, IMAGE);
    expect(r.status).toBe(402);
    expect(r.body).toEqual({
      code: 402,
      error: 'payment_required',
      msg: expect.stringContaining('0.0500'),
      data: { balance: '0.0500', required: '0.0600', currency: 'USD', topUpUrl: s.config.TOPUP_URL },
    });
    expect((await s.call('GET', '/api/v1/jobs/list', { key: a.key })).body.data.items).toEqual([]);
    expect(await balance(a.key)).toBe('0.0500');
  });

  it('stores callBackUrl and shows a pending callback', async () => {
    const a = await s.account(1);
    const id = await create(s, a.key, 'suno-v6', { prompt: 'x' }, { callBackUrl: 'https://hooks.example.com/gg' });
    expect((await info(s, a.key, id)).callback).toEqual({
      url: 'https://hooks.example.com/gg',
      status: 'pending',
      attempts: 0,
      lastAttemptAt: null,
      lastStatusCode: null,
      lastError: null,
      deliveredAt: null,
    });
    expect((await info(s, a.key, await create(s, a.key, 'suno-v6', { prompt: 'x' }))).callback).toBeNull();
  });

  describe('Idempotency-Key', () => {
    it('returns the same task for the same key and body (key order does not matter), charging once', async () => {
      const a = await s.account(1);
      const first = await post(a.key, IMAGE, { 'idempotency-key': 'order-1' });
      const reordered = { input: { resolution: '2K', prompt: 'a red fox' }, model: 'nano-banana-2' };
      const again = await post(a.key, reordered, { 'idempotency-key': 'order-1' });
      expect(again.status).toBe(200);
      expect(again.body.data.taskId).toBe(first.body.data.taskId);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(await balance(a.key)).toBe('0.9400');
    });

    it('refuses the same key with another body (400) and charges nothing', async () => {
      const a = await s.account(1);
      await post(a.key, IMAGE, { 'idempotency-key': 'k2' });
      const r = await post(a.key, { ...IMAGE, input: { prompt: 'another' } }, { 'idempotency-key': 'k2' });
      expect(r.body).toMatchObject({ code: 400, error: 'invalid_request_error' });
      expect(r.body.msg).toMatch(/different request body/);
      expect(await balance(a.key)).toBe('0.9400');
    });

    it('refuses a key over 128 characters; accepts 128', async () => {
      const a = await s.account(1);
      const long = await post(a.key, IMAGE, { 'idempotency-key': 'x'.repeat(129) });
      expect(long.body).toMatchObject({ code: 400, error: 'invalid_request_error' });
      expect(long.body.msg).toMatch(/128/);
      expect((await post(a.key, IMAGE, { 'idempotency-key': 'x'.repeat(128) })).status).toBe(200);
    });

    it('does not bind a key to a refused request, and keys are per account', async () => {
      const a = await s.account(1);
      const b = await s.account(1);
      expect((await post(a.key, { model: 'nano-banana-2', input: {} }, { 'idempotency-key': 'k3' })).status).toBe(400);
      const ok = await post(a.key, IMAGE, { 'idempotency-key': 'k3' });
      expect(ok.status).toBe(200);
      const other = await post(b.key, IMAGE, { 'idempotency-key': 'k3' });
      expect(other.body.data.taskId).not.toBe(ok.body.data.taskId);
    });

    it('forgets a key after 24 hours', async () => {
      const a = await s.account(1);
      const first = await post(a.key, IMAGE, { 'idempotency-key': 'day' });
      clock.advance(24 * 3_600_000 + 1);
      const later = await post(a.key, IMAGE, { 'idempotency-key': 'day' });
      expect(later.body.data.taskId).not.toBe(first.body.data.taskId);
      expect(await balance(a.key)).toBe('0.8800');
    });

    it('50 identical requests at once make one task and one charge', async () => {
      const a = await s.account(5);
      const results = await Promise.all(Array.from({ length: 50 }, () => post(a.key, IMAGE, { 'idempotency-key': 'burst' })));
      expect(results.map((r) => r.status)).toEqual(Array(50).fill(200));
      expect(new Set(results.map((r) => r.body.data.taskId)).size).toBe(1);
      expect(await balance(a.key)).toBe('4.9400');
      const tasks = await s.services.database.db.selectFrom('tasks').select('id').where('account_id', '=', a.id).execute();
      expect(tasks).toHaveLength(1);
      await expectLedgerInvariant(s.services.database);
    });
  });
});

describe('a model disabled by the operator', () => {
  it('answers 505 model_disabled and charges nothing', async () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'gengate-catalog-')), 'catalog.json');
    writeFileSync(file, JSON.stringify({ models: { 'suno-v6': { enabled: false } } }));
    const s = await startServer('sqlite', { RUN_ENGINE: 'false', GENGATE_CATALOG: file });
    try {
      const a = await s.account(1);
      const r = await s.call('POST', '/api/v1/jobs/createTask', { key: a.key, body: { model: 'suno-v6', input: { prompt: 'x' } } });
      expect(r.status).toBe(505);
      expect(r.body).toMatchObject({ code: 505, error: 'model_disabled', data: null });
      expect((await s.call('GET', '/api/v1/user/balance', { key: a.key })).body.data.balance).toBe('1.0000');
    } finally {
      await s.close();
    }
  }, 240_000);
});
