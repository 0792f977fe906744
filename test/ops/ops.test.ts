import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { FAST, create, settle } from '../tasks/support.js';

/** /healthz, /readyz and /metrics over real HTTP, on each database. */

/** The value of one sample line of the exposition text (undefined when absent). */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = (m[2] ?? '').split(/,(?=[a-z_]+=")/).filter(Boolean);
    if (want.every((w) => have.includes(w)) && have.length === want.length) return Number(m[3]);
  }
  return undefined;
}

for (const dialect of dialects()) {
  describe(`operations surface (${dialect})`, () => {
    let s: TestServer;
    beforeAll(async () => {
      s = await startServer(dialect, FAST);
    });
    afterAll(() => s.close());

    it('/healthz answers 200 without touching anything', async () => {
      const r = await s.call('GET', '/healthz');
      expect(r.status).toBe(200);
      expect(r.body).toEqual({ status: 'ok' });
      expect(r.headers.get('cache-control')).toBe('no-store');
    });

    it('/readyz answers 200 when the database and the blob store answer and ffmpeg runs', async () => {
      const r = await s.call('GET', '/readyz');
      expect(r.status).toBe(200);
      expect(r.body).toEqual({ status: 'ok', checks: { database: 'ok', blobs: 'ok', media: 'ok' } });
    });

    it('/metrics counts requests by route pattern and status, with latency buckets', async () => {
      const { key } = await s.account(5);
      await s.call('GET', '/api/v1/user/balance', { key });
      await s.call('GET', '/api/v1/user/balance');
      await s.call('GET', '/api/v1/jobs/recordInfo?taskId=tk_nope', { key });
      await s.call('GET', '/no/such/route/123');
      const r = await s.call('GET', '/metrics');
      expect(r.status).toBe(200);
      expect(r.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
      const text = r.body as string;
      const count = (route: string, status: string) => sample(text, 'gengate_http_request_duration_seconds_count', { method: 'GET', route, status });
      expect(count('/api/v1/user/balance', '200')).toBe(1);
      expect(count('/api/v1/user/balance', '401')).toBe(1);
      expect(count('/api/v1/jobs/recordInfo', '404')).toBe(1);
      // Unknown URLs share one label value, so scanners cannot blow up the series count.
      expect(count('unmatched', '404')).toBe(1);
      expect(text).not.toContain('/no/such/route');
      expect(sample(text, 'gengate_http_request_duration_seconds_bucket', { method: 'GET', route: '/api/v1/user/balance', status: '200', le: '+Inf' })).toBe(1);
      expect(text).toContain('process_cpu_seconds_total');
    });

    it('/metrics reports tasks by state and model, the queue, callbacks and money from the database', async () => {
      const { key } = await s.account(5);
      const queued = await create(s, key, 'suno-v6', { prompt: 'a song about tests' }, { callBackUrl: 'https://example.com/hook' });
      let text = (await s.call('GET', '/metrics')).body as string;
      expect(sample(text, 'gengate_tasks', { state: 'waiting', model: 'suno-v6' })).toBe(1);
      expect(sample(text, 'gengate_engine_queue_depth')).toBe(1);
      expect(sample(text, 'gengate_engine_oldest_waiting_seconds')).toBeGreaterThanOrEqual(0);
      expect(sample(text, 'gengate_callbacks', { status: 'pending' })).toBe(1);
      expect(sample(text, 'gengate_charged_usd_total')).toBeCloseTo(0.09, 6);
      expect(sample(text, 'gengate_refunded_usd_total', { kind: 'full' })).toBe(0);
      // Registered for callback delivery, which counts its attempts by outcome.
      expect(sample(text, 'gengate_callback_deliveries_total', { outcome: 'delivered' })).toBe(0);

      s.services.engine.start();
      expect((await settle(s, key, queued)).state).toBe('success');
      text = (await s.call('GET', '/metrics')).body as string;
      expect(sample(text, 'gengate_tasks', { state: 'success', model: 'suno-v6' })).toBe(1);
      expect(sample(text, 'gengate_tasks', { state: 'waiting', model: 'suno-v6' })).toBeUndefined();
      expect(sample(text, 'gengate_engine_queue_depth')).toBe(0);
      expect(sample(text, 'gengate_engine_oldest_waiting_seconds')).toBe(0);
    });
  });
}

describe('operations surface: protection and failure', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer('sqlite', { METRICS_TOKEN: 'metrics-token-0123456789' });
  });
  afterAll(() => s.close());

  it('/metrics needs the bearer METRICS_TOKEN when it is set', async () => {
    expect((await s.call('GET', '/metrics')).status).toBe(401);
    expect((await s.call('GET', '/metrics', { headers: { authorization: 'Bearer wrong-token-0123456789' } })).status).toBe(401);
    const r = await s.call('GET', '/metrics', { headers: { authorization: 'Bearer metrics-token-0123456789' } });
    expect(r.status).toBe(200);
    expect(r.body).toContain('gengate_http_request_duration_seconds');
  });

  it('/readyz answers 503 naming the failed check when the database is gone', async () => {
    await s.services.database.close();
    const r = await s.call('GET', '/readyz');
    expect(r.status).toBe(503);
    expect(r.body.status).toBe('unavailable');
    expect(r.body.checks.database).toMatch(/^error: /);
    expect(r.body.checks.blobs).toBe('ok');
    expect((await s.call('GET', '/healthz')).status).toBe(200);
  });
});
