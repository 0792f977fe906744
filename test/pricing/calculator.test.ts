import { describe, expect, it } from 'vitest';
import { buildCatalog, validateInput } from '../../src/catalog/index.js';
import { CalculatorError, calculatePrice, quote } from '../../src/pricing/index.js';
import { BASE, facts, photos, videoList } from '../catalog/support.js';

/** GET /v1/pricing/calculate as a function: SPEC endpoint 8 and the Price result. */

const catalog = buildCatalog();
const calc = (query: Record<string, unknown>) => calculatePrice(catalog, query, 90);

function refusal(query: Record<string, unknown>): CalculatorError {
  try {
    calc(query);
  } catch (e) {
    expect(e).toBeInstanceOf(CalculatorError);
    return e as CalculatorError;
  }
  throw new Error(`expected a refusal for ${JSON.stringify(query)}`);
}

describe('calculator: Price result', () => {
  it('answers exactly the SPEC fields; the DECISIONS §3 display example', () => {
    const r = calc({ model: 'seedance-2.5' });
    expect(r).toEqual({
      ok: true,
      model: 'seedance-2.5',
      unit: 'second',
      params: { resolution: '720p', duration: 5, generate_audio: true, reference_images: 0, reference_video_seconds: 0 },
      billable_seconds: 5,
      price_usd: 1.405,
      price_rub: 126.45,
      price_display: '$1.405 (126.45 ₽)',
    });
  });
  it('duration auto is the 30 s price; fractional reference seconds as given', () => {
    expect(calc({ model: 'seedance-2.5', duration: 'auto' })).toMatchObject({ billable_seconds: 30, price_usd: 8.43, params: { duration: 'auto' } });
    expect(calc({ model: 'seedance-2.5', duration: '-1', reference_video_seconds: '12.5', resolution: '480p' })).toMatchObject({
      billable_seconds: 42.5,
      price_usd: 3.188,
    });
    // 0.067 × (5 + 0.5) = 0.3685 → 0.369
    expect(calc({ model: 'seedance-2.0-fast', reference_video_seconds: '0.5' })).toMatchObject({
      billable_seconds: 5.5,
      price_usd: 0.369,
      price_display: '$0.369 (33.21 ₽)',
    });
    // 0.031 × 7.333 = 0.227323 → 0.228
    expect(calc({ model: 'seedance-2.0-fast', resolution: '480p', reference_video_seconds: '2.333' })).toMatchObject({
      billable_seconds: 7.333,
      price_usd: 0.228,
    });
  });
  it('images and music: unit and zero billable seconds', () => {
    expect(calc({ model: 'vendor/nano-banana' })).toMatchObject({
      model: 'google/nano-banana',
      unit: 'image',
      billable_seconds: 0,
      price_usd: 0.02,
      price_display: '$0.020 (1.80 ₽)',
    });
    expect(calc({ model: 'gpt-image-2.5-image-to-image', quality: 'high', reference_images: '3' })).toMatchObject({
      price_usd: 0.167,
      params: { quality: 'high', reference_images: 3 },
    });
    expect(calc({ model: 'nano-banana-pro', resolution: '4K' }).price_usd).toBe(0.12);
    expect(calc({ model: 'suno-v6' })).toMatchObject({ unit: 'run', price_usd: 0.09, params: {} });
  });
  it('generate_audio is accepted and echoed; it does not change the price', () => {
    expect(calc({ model: 'seedance-1.5-pro', generate_audio: 'false' })).toMatchObject({ params: { generate_audio: false }, price_usd: 0.29 });
  });
  it('uses the RUB rate it is given', () => {
    expect(calculatePrice(catalog, { model: 'seedance-2.5' }, 100).price_rub).toBe(140.5);
  });
});

describe('calculator: 400 with {code, message, field}', () => {
  it.each([
    [{}, 'missing_parameter', 'model', /^model is required; one of google\/nano-banana, /],
    [{ model: 'sora-9' }, 'unsupported_model', 'model', /^model must be one of .* \(got "sora-9"\)$/],
    [
      { model: 'seedance-2.0-fast', duration: '20' },
      'invalid_parameter',
      'duration',
      'duration must be a whole number from 4 to 15 for seedance-2.0-fast (got "20")',
    ],
    [{ model: 'seedance-2.0-fast', duration: 'auto' }, 'invalid_parameter', 'duration', /automatic length is not available/],
    [
      { model: 'seedance-2.0-fast', resolution: '1080p' },
      'invalid_parameter',
      'resolution',
      'resolution must be one of "480p", "720p" for seedance-2.0-fast (got "1080p")',
    ],
    [
      { model: 'seedance-2.5', quality: 'high' },
      'invalid_parameter',
      'quality',
      'quality does not apply to seedance-2.5; its price does not depend on it (got "high")',
    ],
    [{ model: 'seedream-pro', duration: '5' }, 'invalid_parameter', 'duration', /^duration does not apply to seedream-pro/],
    [
      { model: 'seedance-2.5', generate_audio: 'maybe' },
      'invalid_parameter',
      'generate_audio',
      'generate_audio must be true or false for seedance-2.5 (got "maybe")',
    ],
    [
      { model: 'seedance-2.5', reference_images: '-1' },
      'invalid_parameter',
      'reference_images',
      'reference_images must be a whole number from 0 to 30 for seedance-2.5 (got "-1")',
    ],
    [{ model: 'seedance-2.0-fast', reference_images: '10' }, 'invalid_parameter', 'reference_images', /from 0 to 9 .*\(got "10"\)$/],
    [
      { model: 'google/nano-banana', reference_images: '1' },
      'invalid_parameter',
      'reference_images',
      'reference_images must be 0 (this model takes no photos) for google/nano-banana (got "1")',
    ],
    [
      { model: 'seedance-2.5', reference_video_seconds: '-2' },
      'invalid_parameter',
      'reference_video_seconds',
      /^reference_video_seconds must be a number of seconds from 0 to 30 .* \(got "-2"\)$/,
    ],
    [{ model: 'seedance-2.0-fast', reference_video_seconds: '15.5' }, 'invalid_parameter', 'reference_video_seconds', /from 0 to 15/],
    [
      { model: 'seedance-1.5-pro', reference_video_seconds: '3' },
      'invalid_parameter',
      'reference_video_seconds',
      /must be 0 \(this model takes no videos\) for seedance-1\.5-pro/,
    ],
    [{ model: 'seedance-2.5', reference_video_seconds: 'ten' }, 'invalid_parameter', 'reference_video_seconds', /\(got "ten"\)$/],
    [
      { model: 'seedance-2.5', colour: 'red' },
      'invalid_parameter',
      'colour',
      /^colour is not a parameter of the calculator; parameters: model, resolution, quality, duration, generate_audio, reference_images, reference_video_seconds$/,
    ],
    [{ model: ['seedance-2.5', 'suno-v6'] }, 'invalid_parameter', 'model', 'model must be given once (got 2 values)'],
  ])('%j → %s on %s', (query, code, field, message) => {
    const e = refusal(query);
    expect(e.body()).toMatchObject({ ok: false, error: { code, field } });
    expect(e.message).toMatch(message);
  });
  it('empty values count as not given', () => {
    expect(calc({ model: 'seedance-2.5', resolution: '', duration: '' }).price_usd).toBe(1.405);
  });
});

describe('calculator and quote agree on a grid (what createTask charges)', () => {
  const grid: { model: string; resolution?: string; quality?: string; duration?: number | 'auto'; clips: number[] }[] = [];
  // The built-in models' shapes; the kie.ai market's (tables over two fields, their own names) are in test/tasks/agreement.test.ts.
  for (const m of catalog.models.filter((x) => !x.source?.includes('/catalog/kie/'))) {
    const by = m.price.by;
    const values = by ? [...Object.keys(m.price.rates), ...Object.keys(m.price.sameAs ?? {})] : [undefined];
    const durField = m.fields.get('duration');
    const durations: (number | 'auto' | undefined)[] =
      m.kind !== 'video' ? [undefined] : [durField!.default as number, ...(m.autoLengthSeconds ? ['auto' as const] : [])];
    if (m.id === 'seedance-2.0-fast') durations.push(4, 15);
    if (m.id === 'seedance-2.5') durations.push(17, 30);
    const clipSets = m.media.videos ? [[], [3], [2, 7], [m.media.videos.totalSeconds]] : [[]];
    for (const v of values)
      for (const d of durations)
        for (const clips of clipSets) {
          grid.push({ model: m.id, ...(by && v ? { [by]: v } : {}), ...(d !== undefined ? { duration: d } : {}), clips });
        }
  }

  it(`${grid.length} combinations: same price from the calculator and from validate + quote with upload facts`, () => {
    expect(grid.length).toBeGreaterThan(100);
    for (const g of grid) {
      const model = catalog.find(g.model)!;
      const input: Record<string, unknown> = {
        prompt: 'grid',
        ...(model.media.images?.min ? { [model.media.images.field]: photos(model.media.images.min) } : {}),
      };
      if (g.resolution) input.resolution = g.resolution;
      if (g.quality) input.quality = g.quality;
      if (g.duration !== undefined) input.duration = g.duration;
      if (g.clips.length) input.video_urls = videoList(g.clips.length);
      const v = validateInput(catalog, g.model, input, facts(g.clips), { uploadBaseUrl: BASE });
      const charged = quote(catalog, v.model, v.input, v.media?.facts);
      const query: Record<string, string> = { model: g.model };
      if (g.resolution) query.resolution = g.resolution;
      if (g.quality) query.quality = g.quality;
      if (g.duration !== undefined) query.duration = String(g.duration);
      if (g.clips.length) query.reference_video_seconds = String(g.clips.reduce((a, b) => a + b, 0));
      const shown = calc(query);
      expect(Math.round(shown.price_usd * 1e6), JSON.stringify(g)).toBe(charged.priceMicros);
      expect(shown.billable_seconds, JSON.stringify(g)).toBe(charged.billableSeconds ?? 0);
      expect(shown.unit).toBe(charged.unit);
    }
  });
});
