import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import sharp from 'sharp';
import { z } from 'zod';
import { undocumentedRoutes } from '../../src/http/routes/docs.js';
import * as S from '../../src/api/schemas.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { FAST, create, settle } from '../tasks/support.js';

/** GET /openapi.json: valid OpenAPI 3.1, covers every registered route, and real answers match its schemas. */

/** Every `$ref` in the document, to check each points at something that exists. */
function refs(value: unknown, out: string[] = []): string[] {
  if (Array.isArray(value)) value.forEach((v) => refs(v, out));
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (k === '$ref' && typeof v === 'string') out.push(v);
      else refs(v, out);
    }
  }
  return out;
}

function resolve(doc: any, pointer: string): unknown {
  return pointer
    .replace(/^#\//, '')
    .split('/')
    .reduce((node, part) => (node == null ? undefined : node[part.replace(/~1/g, '/').replace(/~0/g, '~')]), doc);
}

describe('OpenAPI document', () => {
  let s: TestServer;
  let doc: any;
  beforeAll(async () => {
    s = await startServer('sqlite', { ...FAST, ADMIN_TOKEN: 'admin-token-0123456789', PRICING_BASE_URL: 'https://prices.example.com' });
    const r = await s.call('GET', '/openapi.json');
    expect(r.status).toBe(200);
    doc = r.body;
  });
  afterAll(() => s.close());

  it('is valid OpenAPI 3.1 (checked by a maintained validator), version 1.0.0, every $ref resolves', async () => {
    const result = await new Validator().validate(doc);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe('1.0.0');
    for (const r of new Set(refs(doc))) expect(resolve(doc, r), r).toBeDefined();
  });

  it('documents every route the server registered (Fastify onRoute), and nothing it did not', () => {
    const routes = s.app.registeredRoutes;
    expect(routes).toContain('POST /api/v1/jobs/createTask');
    expect(routes).toContain('POST /admin/v1/accounts');
    expect(undocumentedRoutes(routes)).toEqual([]);
    const registered = new Set(routes.map((r) => r.replace(/:([A-Za-z0-9_]+)/g, '{$1}')));
    for (const [path, item] of Object.entries<any>(doc.paths)) {
      for (const method of ['get', 'post', 'delete']) if (item[method]) expect(registered, `${method} ${path}`).toContain(`${method.toUpperCase()} ${path}`);
    }
  });

  it('puts the price endpoints and /mcp on the pricing server entry', () => {
    expect(doc.servers).toEqual([{ url: s.config.PUBLIC_BASE_URL, description: expect.any(String) }]);
    for (const path of ['/v1/pricing', '/v1/pricing/calculate', '/mcp']) expect(doc.paths[path].servers[0].url).toBe('https://prices.example.com');
    expect(doc.paths['/api/v1/jobs/createTask'].servers).toBeUndefined();
  });

  it('lists every error status with its envelope, and the 402 body', () => {
    const op = doc.paths['/api/v1/jobs/createTask'].post;
    expect(Object.keys(op.responses).sort()).toEqual(['200', '400', '401', '402', '403', '422', '429', '500', '505']);
    const e400 = op.responses['400'].content['application/json'].schema.allOf[1].properties;
    expect(e400.error.enum.sort()).toEqual(['invalid_request_error', 'nsfw_content_detected', 'unsupported_model']);
    expect(op.responses['402'].content['application/json'].schema.allOf[1].properties.data).toEqual({ $ref: '#/components/schemas/PaymentRequired' });
    expect(op.responses['429'].headers['Retry-After']).toBeDefined();
    expect(doc.paths['/api/v1/jobs/recordInfo'].get.responses['404']).toBeDefined();
    expect(doc.components.schemas.PaymentRequired.required.sort()).toEqual(['balance', 'currency', 'required', 'topUpUrl']);
  });

  it('describes createTask input with one schema per model, selected by model (ids and aliases)', () => {
    const body = doc.components.schemas.CreateTaskBody;
    expect(body.oneOf).toHaveLength(s.services.catalog.models.length);
    expect(body.discriminator.propertyName).toBe('model');
    expect(body.discriminator.mapping['vendor/nano-banana']).toBe(body.discriminator.mapping['google/nano-banana']);
    const v25 = doc.components.schemas['Input.seedance-2.5'];
    expect(v25.properties.resolution).toMatchObject({ enum: ['480p', '720p', '1080p'], default: '720p' });
    expect(v25.additionalProperties).toBe(false);
  });

  it('documents callBackUrl and Idempotency-Key as createTask enforces them: a value the document allows is accepted, one it refuses is refused', async () => {
    // Checked the way a client would check (a JSON Schema validator with formats), against real answers.
    const documented = (schema: unknown) => new AjvJsonSchemaValidator().getValidator(schema as object);
    const { key } = await s.account(5);
    const body = (extra: Record<string, unknown>) => ({ model: 'suno-v6', input: { prompt: 'la la' }, ...extra });
    const url = documented(doc.components.schemas['CreateTask.suno-v6'].properties.callBackUrl);
    const urls = [
      'https://example.com/h',
      'HTTP://EXAMPLE.COM/h',
      'ftp://example.com/h',
      'http:',
      'mailto:a@example.com',
      'example.com/h',
      'javascript:alert(1)',
      `https://example.com/${'a'.repeat(2048)}`,
    ];
    for (const callBackUrl of urls) {
      const r = await s.call('POST', '/api/v1/jobs/createTask', { key, body: body({ callBackUrl }) });
      expect(r.status === 200 ? 'accepted' : `${r.status} ${r.body.msg}`, callBackUrl.slice(0, 40)).toEqual(
        url(callBackUrl).valid ? 'accepted' : expect.stringMatching(/^400 callBackUrl/),
      );
    }
    const header = doc.paths['/api/v1/jobs/createTask'].post.parameters.find((p: { name: string }) => p.name === 'Idempotency-Key');
    const idem = documented(header.schema);
    for (const k of ['k-1', 'a'.repeat(128), 'a'.repeat(129), 'has space', '', '~!@#$%^&*()']) {
      const r = await s.call('POST', '/api/v1/jobs/createTask', { key, body: body({}), headers: { 'idempotency-key': k } });
      expect(r.status === 200 ? 'accepted' : `${r.status} ${r.body.msg}`, k.slice(0, 20)).toEqual(
        idem(k).valid ? 'accepted' : expect.stringMatching(/^400 Idempotency-Key must be/),
      );
    }
  });

  it('documents model inputs as createTask reads them: numbers and booleans as text (duration "5") are valid for both, nonsense for neither', async () => {
    const documented = (schema: unknown) => new AjvJsonSchemaValidator().getValidator(schema as object);
    const { key } = await s.account(20);
    const cases: Array<[string, Record<string, unknown>]> = [
      ['wan-3.0', { prompt: 'waves', duration: '5' }],
      ['wan-3.0', { prompt: 'waves', duration: ' 10 ', generate_audio: 'FALSE' }],
      ['seedance-2.5', { prompt: 'waves', duration: '5', return_last_frame: 'true', seed: '42' }],
      ['suno-v6', { prompt: 'la la', instrumental: 'True' }],
      ['wan-3.0', { prompt: 'waves', duration: 'five' }],
      ['seedance-2.5', { prompt: 'waves', generate_audio: 'maybe' }],
    ];
    for (const [model, input] of cases) {
      const valid = documented(doc.components.schemas[`Input.${model}`])(input).valid;
      const r = await s.call('POST', '/api/v1/jobs/createTask', { key, body: { model, input } });
      expect(r.status === 200 ? 'accepted' : `${r.status} ${r.body.msg}`, `${model} ${JSON.stringify(input)}`).toEqual(
        valid ? 'accepted' : expect.stringMatching(/^400 input\./),
      );
    }
    expect(documented(doc.components.schemas['Input.wan-3.0'])({ prompt: 'waves', duration: '5' }).valid).toBe(true);
  });

  it('uses the identifiers of the configured ERROR_STYLE', async () => {
    const ref = await startServer('sqlite', { ERROR_STYLE: 'reference' });
    try {
      const op = (await ref.call('GET', '/openapi.json')).body.paths['/api/v1/jobs/createTask'].post;
      expect(op.responses['400']).toMatchObject({ description: 'nsfw_content_detected' });
      expect(op.responses['422'].content['application/json'].schema.allOf[1].properties.error.enum.sort()).toEqual(['unsupported_model', 'validation_error']);
      expect((await ref.call('GET', '/openapi.json')).body.paths['/admin/v1/accounts']).toBeUndefined();
    } finally {
      await ref.close();
    }
  });

  it('real answers match the documented schemas exactly', async () => {
    const strict = (schema: z.ZodObject, value: unknown) => schema.strict().parse(value);
    const { key } = await s.account(1);
    strict(S.Balance, (await s.call('GET', '/api/v1/user/balance', { key })).body.data);
    const created = (await s.call('POST', '/api/v1/jobs/createTask', { key, body: { model: 'suno-v6', input: { prompt: 'la la' } } })).body.data;
    strict(S.TaskCreated, created);
    s.services.engine.start();
    const video = await create(s, key, 'seedance-1.5-pro', { prompt: 'waves', duration: 4, resolution: '480p' }, { callBackUrl: 'https://example.com/h' });
    strict(S.Task, await settle(s, key, created.taskId));
    const task = strict(S.Task, await settle(s, key, video));
    expect(task.callback).not.toBeNull();
    strict(S.TaskList, (await s.call('GET', '/api/v1/jobs/list', { key })).body.data);
    const poor = await s.account(0);
    strict(
      S.PaymentRequired,
      (await s.call('POST', '/api/v1/jobs/createTask', { key: poor.key, body: { model: 'suno-v6', input: { prompt: 'x' } } })).body.data,
    );
    strict(S.PriceResult, (await s.call('GET', '/v1/pricing/calculate?model=suno-v6')).body);
    strict(S.PriceRefusal, (await s.call('GET', '/v1/pricing/calculate?model=nope')).body);
    const list = strict(S.PriceList, (await s.call('GET', '/v1/pricing')).body);
    (list as { models: unknown[] }).models.forEach((m) => strict(S.PriceList.shape.models.element, m));
    (await s.call('GET', '/api/v1/models')).body.data.forEach((m: unknown) => strict(S.ModelEntry, m));
    const admin = { authorization: 'Bearer admin-token-0123456789' };
    const acct = (await s.call('POST', '/admin/v1/accounts', { headers: admin, body: { name: 'x', balance: '1' } })).body.data;
    strict(S.AccountCreated, acct);
    (await s.call('GET', `/admin/v1/accounts/${acct.account.id}/ledger`, { headers: admin })).body.data.forEach((e: unknown) => strict(S.LedgerEntry, e));
    strict(S.Ready, (await s.call('GET', '/readyz')).body);
    (await s.call('GET', '/admin/v1/models', { headers: admin })).body.data.forEach((m: unknown) => strict(S.ModelSwitch, m));
    const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#f00' } })
      .png()
      .toBuffer();
    const form = new FormData();
    form.append('file', new Blob([png]), 'red.png');
    const up = await fetch(`${s.url}/api/v1/files/upload`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
    strict(S.UploadResult, ((await up.json()) as { data: unknown }).data);
  });

  it('serves the reference page and its assets from the npm package, nothing else', async () => {
    const page = await fetch(`${s.url}/docs`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('/docs/swagger-ui-bundle.js');
    expect(html).not.toMatch(/https?:\/\//);
    const js = await fetch(`${s.url}/docs/swagger-ui-bundle.js`);
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toMatch(/javascript/);
    expect((await js.arrayBuffer()).byteLength).toBeGreaterThan(100_000);
    expect((await fetch(`${s.url}/docs/init.js`)).status).toBe(200);
    expect((await s.call('GET', '/docs/..%2fpackage.json')).status).toBe(404);
    expect((await s.call('GET', '/docs/index.html')).status).toBe(404);
  });
});
