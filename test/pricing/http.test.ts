import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';

/** SPEC endpoints 6–8 over real HTTP on loopback: /api/v1/models, /v1/pricing, /v1/pricing/calculate. */

describe('catalog and price endpoints over HTTP', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer('sqlite', { ERROR_STYLE: 'reference', USD_RUB_RATE: '100', PRICING_BASE_URL: 'https://prices.example.com' });
  });
  afterAll(() => s.close());

  describe('GET /api/v1/models', () => {
    it('answers the envelope with every model, no key needed', async () => {
      const r = await s.call('GET', '/api/v1/models');
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ code: 200, msg: 'success' });
      expect(r.body.data).toHaveLength(19 + 28); // built-in + the kie.ai market (catalog/kie/)
      expect(r.headers.get('x-request-id')).toBeTruthy();
      const entry = r.body.data.find((m: { id: string }) => m.id === 'google/nano-banana');
      expect(entry).toMatchObject({ aliases: ['vendor/nano-banana'], kind: 'image', enabled: true });
    });
    it('each entry has parameters as JSON Schema, pricing in words and numbers, and limits', async () => {
      const { body } = await s.call('GET', '/api/v1/models');
      const v25 = body.data.find((m: { id: string }) => m.id === 'seedance-2.5');
      expect(v25.parameters).toMatchObject({ type: 'object', additionalProperties: false });
      expect(v25.parameters.properties.resolution).toMatchObject({ enum: ['480p', '720p', '1080p'], default: '720p' });
      expect(v25.parameters.properties.size.description).toBe('Alias of aspect_ratio.');
      expect(v25.pricing).toMatchObject({
        unit: 'second',
        price_by: 'resolution',
        calculator_url: 'https://prices.example.com/v1/pricing/calculate?model=seedance-2.5',
      });
      expect(v25.pricing.tiers[1]).toEqual({
        when: { resolution: '720p' },
        price: { usd: 0.281, micros: 281_000, rub: 28.1 },
        with_client_video: { usd: 0.169, micros: 169_000, rub: 16.9 },
      });
      expect(v25.pricing.display).toContain('720p $0.281/s (with client video $0.169/s)');
      expect(v25.limits.videos).toMatchObject({ max: 10, total_seconds: 30, clip_seconds: { min: 2, max: 30 } });
      expect(v25.limits.audios).toMatchObject({ max: 10, total_seconds: 30, alone: true });
    });
  });

  describe('GET /v1/pricing', () => {
    it('answers the price list without the envelope, with ETag and Cache-Control', async () => {
      const r = await s.call('GET', '/v1/pricing');
      expect(r.status).toBe(200);
      expect(r.headers.get('content-type')).toMatch(/^application\/json/);
      expect(r.headers.get('cache-control')).toBe('public, max-age=300');
      expect(r.headers.get('etag')).toMatch(/^"[A-Za-z0-9_-]{32}"$/);
      expect(r.body).toMatchObject({
        object: 'price_list',
        currency: 'USD',
        usd_rub_rate: 100,
        calculator_url: 'https://prices.example.com/v1/pricing/calculate',
      });
      expect(r.body.code).toBeUndefined();
      expect(r.body.models).toHaveLength(19 + 28);
      const suno = r.body.models.find((m: { id: string }) => m.id === 'suno-v6');
      expect(suno).toMatchObject({ unit: 'run', price_by: null, tiers: [{ when: {}, price: { usd: 0.09, micros: 90_000, rub: 9 } }] });
    });
    it('answers 304 to a matching If-None-Match (also weak or in a list), 200 otherwise', async () => {
      const etag = (await s.call('GET', '/v1/pricing')).headers.get('etag')!;
      for (const header of [etag, `W/${etag}`, `"nope", ${etag}`, '*']) {
        const r = await fetch(`${s.url}/v1/pricing`, { headers: { 'if-none-match': header } });
        expect(r.status, header).toBe(304);
        expect(await r.text()).toBe('');
        expect(r.headers.get('etag')).toBe(etag);
      }
      expect((await s.call('GET', '/v1/pricing', { headers: { 'if-none-match': '"old"' } })).status).toBe(200);
    });
  });

  describe('GET /v1/pricing/calculate', () => {
    it('answers the Price result', async () => {
      const r = await s.call('GET', '/v1/pricing/calculate?model=seedance-2.5&duration=auto&reference_video_seconds=2.5&resolution=480p');
      expect(r.status).toBe(200);
      // 0.075 × (30 + 2.5) = 2.4375 → 2.438
      expect(r.body).toEqual({
        ok: true,
        model: 'seedance-2.5',
        unit: 'second',
        params: { resolution: '480p', duration: 'auto', generate_audio: true, reference_images: 0, reference_video_seconds: 2.5 },
        billable_seconds: 32.5,
        price_usd: 2.438,
        price_rub: 243.8,
        price_display: '$2.438 (243.80 ₽)',
      });
    });
    it('answers 400 {ok: false, error: {code, message, field}} whatever ERROR_STYLE is', async () => {
      const r = await s.call('GET', '/v1/pricing/calculate?model=seedance-2.0-fast&duration=20');
      expect(r.status).toBe(400);
      expect(r.headers.get('cache-control')).toBe('no-store');
      expect(r.body).toEqual({
        ok: false,
        error: { code: 'invalid_parameter', message: 'duration must be a whole number from 4 to 15 for seedance-2.0-fast (got "20")', field: 'duration' },
      });
      expect((await s.call('GET', '/v1/pricing/calculate')).body.error).toMatchObject({ code: 'missing_parameter', field: 'model' });
      expect((await s.call('GET', '/v1/pricing/calculate?model=nope')).body.error).toMatchObject({ code: 'unsupported_model', field: 'model' });
    });
    it('accepts the vendor alias and reports the canonical id', async () => {
      const r = await s.call('GET', '/v1/pricing/calculate?model=vendor%2Fnano-banana-edit&reference_images=2');
      expect(r.body).toMatchObject({ ok: true, model: 'google/nano-banana-edit', unit: 'image', price_usd: 0.02 });
    });
    it('refuses hostile queries cleanly', async () => {
      for (const q of [
        'model=seedance-2.5&__proto__=1',
        'model=seedance-2.5&model=suno-v6',
        'model=seedance-2.5&reference_video_seconds=1e999',
        `model=${'x'.repeat(5000)}`,
      ]) {
        const r = await s.call('GET', `/v1/pricing/calculate?${q}`);
        expect(r.status, q).toBe(400);
        expect(r.body.ok).toBe(false);
        expect(r.body.error.message.length).toBeLessThan(1000);
      }
    });
    it('answers a repeated query the same way each time, refusals included', async () => {
      const q = '/v1/pricing/calculate?model=seedance-2.5&duration=7&resolution=1080p';
      const first = await s.call('GET', q);
      const again = await s.call('GET', q);
      expect(again.status).toBe(200);
      expect(again.body).toEqual(first.body);
      expect(again.body).toMatchObject({ billable_seconds: 7, price_usd: 3.507 });
      expect(again.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(again.headers.get('cache-control')).toBe('public, max-age=300');
      const other = await s.call('GET', '/v1/pricing/calculate?model=seedance-2.5&duration=8&resolution=1080p');
      expect(other.body.price_usd).toBe(4.008);
      for (let i = 0; i < 2; i++) {
        const bad = await s.call('GET', '/v1/pricing/calculate?model=seedance-2.5&duration=31');
        expect(bad.status).toBe(400);
        expect(bad.headers.get('cache-control')).toBe('no-store');
        expect(bad.body).toMatchObject({ ok: false, error: { code: 'invalid_parameter', field: 'duration' } });
      }
    });
    it('ignores a key: the price endpoints are public', async () => {
      const r = await s.call('GET', '/v1/pricing/calculate?model=suno-v6', { key: 'not-a-real-key' });
      expect(r.status).toBe(200);
    });
  });
});

describe('an operator catalog file reaches the endpoints', () => {
  let s: TestServer;
  beforeAll(async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'gg-cat-'));
    const file = path.join(dir, 'catalog.json');
    writeFileSync(file, JSON.stringify({ models: { 'wan-2.7': { enabled: false }, 'seedance-2.0-fast': { price: { '720p': '0.2' }, aliases: ['fast'] } } }));
    s = await startServer('sqlite', { GENGATE_CATALOG: file });
  });
  afterAll(() => s.close());

  it('marks disabled models and shows overridden prices everywhere', async () => {
    const models = (await s.call('GET', '/api/v1/models')).body.data;
    expect(models.find((m: { id: string }) => m.id === 'wan-2.7').enabled).toBe(false);
    expect(models.find((m: { id: string }) => m.id === 'seedance-2.0-fast').aliases).toEqual(['bytedance/seedance-2-fast', 'fast']);
    const list = (await s.call('GET', '/v1/pricing')).body;
    expect(list.models.find((m: { id: string }) => m.id === 'seedance-2.0-fast').tiers[1].price.usd).toBe(0.2);
    expect((await s.call('GET', '/v1/pricing/calculate?model=fast')).body).toMatchObject({ model: 'seedance-2.0-fast', price_usd: 1 });
    // A kie.ai id is priced like its GenGate model, with the operator's prices.
    expect((await s.call('GET', '/v1/pricing/calculate?model=bytedance/seedance-2-fast')).body).toMatchObject({ model: 'seedance-2.0-fast', price_usd: 1 });
  });
});
