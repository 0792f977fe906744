import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config.js';
import { AppError } from '../../src/errors.js';
import { buildCatalog, loadCatalog, validateInput } from '../../src/catalog/index.js';
import { quote } from '../../src/pricing/index.js';

/** The operator's catalog file (GENGATE_CATALOG): prices, enabled flags, aliases, routes. */

function file(content: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'gg-catalog-'));
  const p = path.join(dir, 'catalog.json');
  writeFileSync(p, content);
  return p;
}

describe('catalog overrides', () => {
  it('changes tier prices, flat prices and with-video prices; the rest stays', () => {
    const c = buildCatalog({
      models: {
        'seedance-2.5': { price: { '720p': '0.300' }, price_with_client_video: { '1080p': 0.25 } },
        'vendor/nano-banana': { price: '0.025' },
        'gpt-image-2.5-text-to-image': { price: { medium: '0.05' } },
      },
    });
    const s = c.find('seedance-2.5')!.price;
    expect(s.rates).toEqual({ '480p': 125_000, '720p': 300_000, '1080p': 501_000 });
    expect(s.withVideo?.['1080p']).toBe(250_000);
    expect(quote(c, 'google/nano-banana', { prompt: 'x' }).priceMicros).toBe(25_000);
    // quality auto is priced as medium, so it follows the override
    expect(quote(c, 'gpt-image-2.5-text-to-image', { quality: 'auto' }).priceMicros).toBe(50_000);
  });
  it('disables a model: validation answers 505 model_disabled', () => {
    const c = buildCatalog({ models: { 'suno-v6': { enabled: false } } });
    expect(c.find('suno-v6')?.enabled).toBe(false);
    try {
      validateInput(c, 'suno-v6', { prompt: 'x' });
      expect.unreachable();
    } catch (e) {
      expect((e as AppError).kind).toBe('model_disabled');
      expect((e as AppError).message).toBe('model suno-v6 is temporarily disabled by the operator');
    }
  });
  it('adds aliases that resolve to the canonical id', () => {
    const c = buildCatalog({ models: { 'seedance-2.0-fast': { aliases: ['sd-fast', 'bytedance/seedance-2.0-fast'] } } });
    expect(validateInput(c, 'sd-fast', { prompt: 'x' }).model).toBe('seedance-2.0-fast');
    expect(c.find('bytedance/seedance-2.0-fast')?.id).toBe('seedance-2.0-fast');
  });
  it.each([
    [{ model: {} }, 'catalog overrides: model: unknown key; the file has one key, "models"'],
    [{ models: { 'seedance-9': {} } }, /^catalog overrides: models\."seedance-9": unknown model; known: google\/nano-banana, /],
    [
      { models: { 'seedance-2.5': { prize: 1 } } },
      'catalog overrides: models."seedance-2.5".prize: unknown field; fields: enabled, aliases, price, price_with_client_video, routes',
    ],
    [
      { models: { 'seedance-2.5': { price: { '1440p': '1' } } } },
      'catalog overrides: models."seedance-2.5".price.1440p: unknown resolution tier; tiers: 480p, 720p, 1080p',
    ],
    [{ models: { 'seedance-2.5': { price: '0.2' } } }, /price: must be an object of resolution tiers \(480p, 720p, 1080p\) to USD amounts$/],
    [{ models: { 'seedream-pro': { price: { '1K': '0.1' } } } }, /seedream-pro"\.price: this model has one flat price; give a USD amount such as "0\.025"$/],
    [{ models: { 'suno-v6': { price: '-1' } } }, 'catalog overrides: models."suno-v6".price: must be a USD amount such as "0.125" (got "-1")'],
    [{ models: { 'seedance-1.5-pro': { price_with_client_video: { '480p': '0.1' } } } }, /price_with_client_video: seedance-1\.5-pro takes no client video$/],
    [{ models: { 'suno-v6': { enabled: 'no' } } }, 'catalog overrides: models."suno-v6".enabled: must be true or false (got "no")'],
    [{ models: { 'suno-v6': { aliases: ['has space'] } } }, /aliases\[0\]: must be a name of letters/],
    [{ models: { 'suno-v6': { aliases: ['seedance-2.5'] } } }, 'catalog overrides: the name "seedance-2.5" is used by both seedance-2.5 and suno-v6'],
    [
      { models: { 'suno-v6': { routes: [{ backend: 'midjourney' }] } } },
      'catalog overrides: models."suno-v6".routes[0].backend: must be one of local, same-api, byteplus, fal, replicate, kie, comfyui (got "midjourney")',
    ],
    [
      { models: { 'suno-v6': { routes: [{ backend: 'fal', model: 'x', key_env: 'FAL_KEY', min_credit: 10 }] } } },
      'catalog overrides: models."suno-v6".routes[0].min_credit: unknown field; a fal route has backend, name, model, base_url, key_env, map, concurrency',
    ],
    [
      { models: { 'suno-v6': { routes: [{ backend: 'kie', key_env: 'KIE_API_KEY', min_credit: -1 }] } } },
      'catalog overrides: models."suno-v6".routes[0].min_credit: must be a number of kie.ai credits, 0 or more (got -1)',
    ],
    [{ models: { 'suno-v6': { routes: [{ backend: 'kie', key_env: 'KIE_API_KEY', upload_url: 'ftp://x' }] } } }, /routes\[0\]\.upload_url: must be an http/],
    [{ models: { 'google/nano-banana': {}, 'vendor/nano-banana': {} } }, /google\/nano-banana is edited twice/],
  ])('refuses %j with a message naming the field', (overrides, message) => {
    expect(() => buildCatalog(overrides)).toThrow(ConfigError);
    expect(() => buildCatalog(overrides)).toThrow(message);
  });
  it('a kie route may leave out model (the kie.ai id comes from the shared table) and has upload_url and min_credit', () => {
    const catalog = buildCatalog({
      models: {
        'seedream-pro': { routes: [{ backend: 'kie', key_env: 'KIE_API_KEY', upload_url: 'https://up.example.com/', min_credit: 50 }, { backend: 'local' }] },
      },
    });
    expect(catalog.find('seedream-pro')!.routes[0]).toEqual({ backend: 'kie', keyEnv: 'KIE_API_KEY', uploadUrl: 'https://up.example.com', minCredit: 50 });
  });
  it('loadCatalog reads GENGATE_CATALOG and names the file in every error', () => {
    // The 19 built-in models and the 28 of the kie.ai market (catalog/kie/).
    expect(loadCatalog({}).models).toHaveLength(19 + 28);
    const good = file(JSON.stringify({ models: { 'wan-2.7': { enabled: false } } }));
    expect(loadCatalog({ GENGATE_CATALOG: good }).find('wan-2.7')?.enabled).toBe(false);
    const bad = file('{"models": {"wan-2.7": {"price": {"4k": "1"}}}}');
    expect(() => loadCatalog({ GENGATE_CATALOG: bad })).toThrow(
      `GENGATE_CATALOG ${bad}: models."wan-2.7".price.4k: unknown resolution tier; tiers: 480p, 720p, 1080p`,
    );
    const broken = file('{"models": ');
    expect(() => loadCatalog({ GENGATE_CATALOG: broken })).toThrow(new RegExp(`^GENGATE_CATALOG: ${broken} is not valid JSON`));
    expect(() => loadCatalog({ GENGATE_CATALOG: '/nonexistent/catalog.json' })).toThrow(/^GENGATE_CATALOG: cannot read \/nonexistent\/catalog\.json/);
  }, 240_000);
});
