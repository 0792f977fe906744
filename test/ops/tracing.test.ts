import { createServer, type Server } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { buildServices } from '../../src/services.js';
import { MICROS_PER_USD } from '../../src/billing/index.js';
import { otlpHeaders } from '../../src/tracing/index.js';
import { spawnServe, stop } from '../helpers/cli.js';
import { createTestDb, type TestDb } from '../helpers/db.js';
import { eventually } from '../tasks/support.js';
import { startKieFake } from '../fakes/kie.js';
import { makeStill } from '../media/helpers.js';
import { writeFileSync } from 'node:fs';
import path from 'node:path';

/** One span as OTLP/HTTP JSON carries it. */
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Array<{ key: string; value: Record<string, unknown> }>;
}

/** A local OTLP/HTTP receiver (the collector is an external service): keeps every span posted to /v1/traces, and the headers. */
async function receiver() {
  const spans: OtlpSpan[] = [];
  const headers: string[] = [];
  const server: Server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      if (req.url === '/v1/traces') {
        headers.push(String(req.headers['x-collector-key']));
        const body = JSON.parse(Buffer.concat(parts).toString('utf8')) as { resourceSpans: Array<{ scopeSpans: Array<{ spans: OtlpSpan[] }> }> };
        for (const r of body.resourceSpans) for (const s of r.scopeSpans) spans.push(...s.spans);
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const a = server.address();
  return { url: `http://127.0.0.1:${typeof a === 'object' && a ? a.port : 0}`, spans, headers, close: () => new Promise((r) => server.close(r)) };
}

/** The callbacks' receiver: counts deliveries. */
async function callbacks() {
  let count = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      count++;
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const a = server.address();
  return { url: `http://127.0.0.1:${typeof a === 'object' && a ? a.port : 0}/cb`, count: () => count, close: () => new Promise((r) => server.close(r)) };
}

describe('OpenTelemetry traces (decision 2603)', () => {
  let db: TestDb;
  const closers: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const c of closers.splice(0)) await c();
    await db?.drop();
  });

  async function setup() {
    db = await createTestDb('sqlite');
    const env = {
      DATA_DIR: db.dir,
      DATABASE_URL: db.url,
      FIRST_RUN_ACCOUNT: 'false',
      ENGINE_POLL_MS: '50',
      LOCAL_QUEUE_MS: '0',
      LOCAL_GENERATE_MS: '0',
      MODERATION_IMAGES: 'off',
      ALLOW_PRIVATE_NETWORK: 'true',
      LOG_LEVEL: 'info',
    };
    const s = await buildServices(loadConfig(env));
    const { apiKey } = await s.accounts.create('traces', MICROS_PER_USD);
    await s.close();
    const cb = await callbacks();
    closers.push(cb.close);
    // seedream-pro goes to an upstream (a kie.ai double), so the trace has its calls.
    const kie = await startKieFake('kie-trace');
    closers.push(() => kie.close());
    kie.media('image.jpg', await makeStill(path.join(db.dir, 'image.jpg')), 'image/jpeg');
    const catalog = path.join(db.dir, 'catalog.json');
    writeFileSync(
      catalog,
      JSON.stringify({ models: { 'seedream-pro': { routes: [{ backend: 'kie', base_url: kie.url, upload_url: kie.uploadUrl, key_env: 'KIE_TRACE_KEY' }] } } }),
    );
    return { env: { ...env, GENGATE_CATALOG: catalog, KIE_TRACE_KEY: 'kie-trace', UPSTREAM_POLL_MS: '20' }, apiKey, cb };
  }

  /** Creates one task (with a caller's traceparent) and waits for its callback; returns the task id. */
  async function oneTask(url: string, apiKey: string, callBackUrl: string, done: () => boolean, traceparent?: string) {
    const res = await fetch(`${url}/api/v1/jobs/createTask`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', ...(traceparent ? { traceparent } : {}) },
      body: JSON.stringify({ model: 'seedream-pro', input: { prompt: 'traced' }, callBackUrl }),
    });
    expect(res.status).toBe(200);
    const taskId = ((await res.json()) as { data: { taskId: string } }).data.taskId;
    await eventually(done, 20_000, 'the callback');
    return taskId;
  }

  it('one trace from the request through the create transaction, the engine steps, the upstream calls and the callback; its id in the log lines', async () => {
    const { env, apiKey, cb } = await setup();
    const otlp = await receiver();
    closers.push(otlp.close);
    const p = await spawnServe({
      ...env,
      OTEL_TRACES_EXPORTER: 'otlp',
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
      OTEL_EXPORTER_OTLP_HEADERS: 'x-collector-key=s%3Dcret',
    });
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    await oneTask(p.url, apiKey, cb.url, () => cb.count() === 1, `00-${traceId}-00f067aa0ba902b7-01`);
    expect(await stop(p.child)).toBe(0); // a stop sends the spans still queued
    const mine = otlp.spans.filter((s) => s.traceId === traceId);
    const byName = (name: string) => mine.filter((s) => s.name === name);
    const [request] = byName('POST /api/v1/jobs/createTask');
    expect(request, JSON.stringify(otlp.spans.map((s) => s.name))).toBeDefined();
    expect(request!.parentSpanId).toBe('00f067aa0ba902b7'); // the caller's span
    expect(request!.kind).toBe(2); // SERVER
    expect(byName('tasks.create').map((s) => s.parentSpanId)).toEqual([request!.spanId]);
    const steps = byName('engine.step');
    expect(steps.length).toBeGreaterThanOrEqual(2); // hand-off, then polls and the result
    for (const s of steps) expect(s.parentSpanId).toBe(request!.spanId);
    const stepIds = new Set(steps.map((s) => s.spanId));
    for (const name of ['upstream.submit', 'upstream.progress', 'upstream.results']) {
      expect(byName(name).length, name).toBeGreaterThan(0);
      for (const s of byName(name)) expect(stepIds.has(s.parentSpanId!), name).toBe(true);
    }
    expect(byName('callback.deliver').map((s) => s.parentSpanId)).toEqual([request!.spanId]);
    expect(new Set(otlp.headers)).toEqual(new Set(['s=cret']));
    // The request's log line carries the trace id (the other lines get it from pino's mixin).
    const requestLine = p
      .output()
      .split('\n')
      .find((l) => l.includes('"msg":"request"') && l.includes('createTask'));
    expect(JSON.parse(requestLine!).traceId).toBe(traceId);
  }, 240_000);

  it('off by default: no span is sent, no trace id is logged, no traceparent is kept', async () => {
    const { env, apiKey, cb } = await setup();
    const otlp = await receiver();
    closers.push(otlp.close);
    // The endpoint is set, the exporter is not: nothing goes out.
    const p = await spawnServe({ ...env, OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url });
    const taskId = await oneTask(p.url, apiKey, cb.url, () => cb.count() === 1, '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01');
    expect(await stop(p.child)).toBe(0);
    expect(otlp.spans).toEqual([]);
    expect(p.output()).not.toMatch(/traceId/);
    const s = await buildServices(loadConfig(env));
    closers.push(() => s.close());
    expect((await s.database.db.selectFrom('tasks').select('trace_parent').where('id', '=', taskId).executeTakeFirstOrThrow()).trace_parent).toBeNull();
  }, 240_000);

  it('OTEL_EXPORTER_OTLP_HEADERS: name=value pairs, values %-decoded', () => {
    expect(otlpHeaders('a=1,x-key=s%3Dcret')).toEqual({ a: '1', 'x-key': 's=cret' });
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_HEADERS: 'novalue' })).toThrow(/OTEL_EXPORTER_OTLP_HEADERS: must be comma-separated name=value pairs/);
    expect(() => loadConfig({ OTEL_TRACES_EXPORTER: 'jaeger' })).toThrow(/OTEL_TRACES_EXPORTER: .*"none".*"otlp"/);
  });
});
