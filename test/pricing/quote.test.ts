import { describe, expect, it } from 'vitest';
import { buildCatalog, validateInput, type MediaFacts } from '../../src/catalog/index.js';
import { quote, settleAutoLength } from '../../src/pricing/index.js';
import { facts, videoList, BASE } from '../catalog/support.js';

/**
 * Prices worked out by hand from the SPEC price table and DECISIONS §3–§5. Each case goes through
 * validation first (as createTask will), so defaults, trims and drafts are applied exactly as for
 * a client. `usd` is the expected price in USD text; billable is the seconds charged.
 */

const catalog = buildCatalog();
const P = { prompt: 'a kite over the sea' };

function priced(model: string, input: Record<string, unknown>, media?: MediaFacts) {
  const v = validateInput(catalog, model, input, media, { uploadBaseUrl: BASE });
  return quote(catalog, v.model, v.input, v.media?.facts);
}

const micros = (usd: string) => Math.round(Number(usd) * 1_000_000);

type Case = [string, string, Record<string, unknown>, MediaFacts | undefined, string, number | null];
const CASES: Case[] = [
  // model, label, input, media facts, expected USD, expected billable seconds
  ['seedance-2.0-fast', 'defaults 720p 5 s: 0.112 × 5', P, undefined, '0.560', 5],
  ['seedance-2.0-fast', '480p 4 s: 0.052 × 4', { ...P, resolution: '480p', duration: 4 }, undefined, '0.208', 4],
  ['seedance-2.0-fast', '480p 15 s: 0.052 × 15', { ...P, resolution: '480p', duration: '15' }, undefined, '0.780', 15],
  ['seedance-2.0-fast', '720p 5 s + 3 s client video at 0.067: × 8', { ...P, video_urls: videoList(1) }, facts([3]), '0.536', 8],
  ['seedance-2.0-fast', '480p 5 s + clips 4 + 6 s at 0.031: × 15', { ...P, resolution: '480p', video_urls: videoList(2) }, facts([4, 6]), '0.465', 15],
  [
    'seedance-2.0-fast',
    'auto_trim 10/8/6 → 5/5/5, 720p 5 s + 15 s at 0.067: × 20',
    { ...P, video_urls: videoList(3), auto_trim: true },
    facts([10, 8, 6]),
    '1.340',
    20,
  ],
  [
    'seedance-2.0-fast',
    'audio only adds nothing: 720p 5 s at 0.112',
    { ...P, image_urls: ['https://img.example.com/a.jpg'], audio_urls: [`${BASE}/files/a0/sound.mp3`] },
    facts([], [12]),
    '0.560',
    5,
  ],
  ['seedance-2.5', 'defaults 720p 5 s: 0.281 × 5', P, undefined, '1.405', 5],
  ['seedance-2.5', '1080p 30 s: 0.501 × 30', { ...P, resolution: '1080p', duration: 30 }, undefined, '15.030', 30],
  ['seedance-2.5', '480p 4 s: 0.125 × 4', { ...P, resolution: '480p', duration: 4 }, undefined, '0.500', 4],
  ['seedance-2.5', 'auto at 720p is charged as 30 s: 0.281 × 30', { ...P, duration: 'auto' }, undefined, '8.430', 30],
  [
    'seedance-2.5',
    '-1 at 1080p with a 10 s clip: 0.299 × (30 + 10)',
    { ...P, duration: -1, resolution: '1080p', video_urls: videoList(1) },
    facts([10]),
    '11.960',
    40,
  ],
  ['seedance-2.5', 'draft at "1080p" is 480p: 0.125 × 10', { ...P, draft: true, resolution: '1080p', duration: 10 }, undefined, '1.250', 10],
  ['seedance-2.5', 'draft with a 6 s clip: 0.075 × (5 + 6)', { ...P, draft: true, video_urls: videoList(1) }, facts([6]), '0.825', 11],
  [
    'seedance-2.5',
    'edit: length = first clip 7 s, duration ignored; + 7 + 5 source at 0.169',
    { ...P, video_mode: 'edit', duration: 12, video_urls: videoList(2) },
    facts([7, 5]),
    '3.211',
    19,
  ],
  ['seedance-2.5', 'edit trimmed to 9 s: (9 + 9) × 0.169', { ...P, video_mode: 'edit', trim_video_to: 9, video_urls: videoList(1) }, facts([20]), '3.042', 18],
  [
    'seedance-2.5',
    'extend 480p: 6 s result + 10 s clip at 0.075',
    { ...P, video_mode: 'extend', resolution: '480p', duration: 6, video_urls: videoList(1) },
    facts([10]),
    '1.200',
    16,
  ],
  [
    'seedance-2.5',
    'auto + trim_to_duration keeps a 30 s clip: (30 + 30) × 0.169',
    { ...P, duration: 'auto', trim_to_duration: true, video_urls: videoList(1) },
    facts([30]),
    '10.140',
    60,
  ],
  [
    'seedance-2.5',
    'trim_to_duration to 8 s: (8 + 8) × 0.075 at 480p',
    { ...P, resolution: '480p', duration: 8, trim_to_duration: true, video_urls: videoList(1) },
    facts([25]),
    '1.200',
    16,
  ],
  ['seedance-2.0', '1080p 15 s + 15 s clip at 0.240', { ...P, resolution: '1080p', duration: 15, video_urls: videoList(1) }, facts([15]), '7.200', 30],
  ['seedance-2.0', '480p 5 s: 0.100 × 5', { ...P, resolution: '480p' }, undefined, '0.500', 5],
  ['seedance-2.0-mini', '480p 5 s: 0.030 × 5', { ...P, resolution: '480p' }, undefined, '0.150', 5],
  ['seedance-2.0-mini', '720p 15 s: 0.065 × 15', { ...P, duration: 15 }, undefined, '0.975', 15],
  ['seedance-1.5-pro', '480p 4 s: 0.027 × 4', { ...P, resolution: '480p', duration: 4 }, undefined, '0.108', 4],
  ['seedance-1.5-pro', '1080p 12 s: 0.141 × 12', { ...P, resolution: '1080p', duration: 12 }, undefined, '1.692', 12],
  [
    'seedance-1.5-pro',
    '720p 7 s with both frames: 0.058 × 7',
    { first_frame_url: 'https://img.example.com/a.jpg', last_frame_url: 'https://img.example.com/b.jpg', duration: 7 },
    undefined,
    '0.406',
    7,
  ],
  ['wan-3.0', '1080p 15 s: 0.150 × 15', { ...P, resolution: '1080p', duration: 15 }, undefined, '2.250', 15],
  ['wan-2.7', '480p 10 s: 0.040 × 10', { ...P, resolution: '480p', duration: 10 }, undefined, '0.400', 10],
  ['higgsfield-genjutsu', '1080p 10 s: 0.180 × 10', { ...P, resolution: '1080p', duration: 10 }, undefined, '1.800', 10],
  ['grok-imagine-1.5', '720p 15 s: 0.060 × 15', { ...P, duration: 15 }, undefined, '0.900', 15],
  ['grok-imagine', 'defaults 720p 6 s: 0.040 × 6', P, undefined, '0.240', 6],
  ['grok-imagine', '480p 10 s: 0.020 × 10', { ...P, resolution: '480p', duration: 10 }, undefined, '0.200', 10],
  ['vendor/nano-banana', 'one image', P, undefined, '0.020', null],
  ['google/nano-banana-edit', 'one image', { ...P, image_input: ['https://img.example.com/a.jpg'] }, undefined, '0.020', null],
  ['nano-banana-2', '1K default', P, undefined, '0.040', null],
  ['nano-banana-2', '2K', { ...P, resolution: '2K' }, undefined, '0.060', null],
  ['nano-banana-2', '4K', { ...P, resolution: '4K' }, undefined, '0.090', null],
  ['nano-banana-pro', '2K', { ...P, resolution: '2K' }, undefined, '0.090', null],
  ['nano-banana-pro', '4K', { ...P, resolution: '4K' }, undefined, '0.120', null],
  ['seedream-pro', 'flat, whatever the resolution', { ...P, resolution: '4K' }, undefined, '0.030', null],
  ['seedream-flash', 'flat', P, undefined, '0.015', null],
  ['gpt-image-2.5-text-to-image', 'quality auto is medium', P, undefined, '0.042', null],
  ['gpt-image-2.5-text-to-image', 'low', { ...P, quality: 'low' }, undefined, '0.011', null],
  ['gpt-image-2.5-image-to-image', 'high', { ...P, quality: 'high', image_input: ['https://img.example.com/a.jpg'] }, undefined, '0.167', null],
  ['suno-v6', 'per run, whatever the settings', { custom_mode: true, title: 'T', instrumental: true, version: 'v4', duration: 360 }, undefined, '0.090', null],
];

describe('quote: hand-worked cases', () => {
  it.each(CASES)('%s — %s', (model, _label, input, media, usd, billable) => {
    const q = priced(model, input, media);
    expect(q.priceMicros).toBe(micros(usd));
    expect(q.billableSeconds).toBe(billable);
    expect(q.model).toBe(catalog.find(model)!.id);
  });

  it('reports the rate and the parts of the seconds', () => {
    expect(priced('seedance-2.5', { ...P, duration: -1, resolution: '1080p', video_urls: videoList(1) }, facts([10]))).toEqual({
      model: 'seedance-2.5',
      unit: 'second',
      units: 40,
      resultSeconds: 30,
      sourceSeconds: 10,
      billableSeconds: 40,
      rateKey: '1080p',
      rateMicros: 299_000,
      withClientVideo: true,
      priceMicros: 11_960_000,
      autoLength: true,
      draftFinal: false,
    });
    expect(priced('suno-v6', { prompt: 'x' })).toMatchObject({ unit: 'run', units: 1, rateKey: '*', rateMicros: 90_000, billableSeconds: null });
    expect(priced('gpt-image-2.5-text-to-image', P)).toMatchObject({ unit: 'image', rateKey: 'auto', rateMicros: 42_000 });
  });
});

describe('quote: draft finals (DECISIONS §5)', () => {
  const final = (draft: Record<string, unknown>) => ({ ...draft, draft: false, draft_task_id: 'tsk_d', resolution: '1080p' });
  it('bills the result seconds at 1080p: 0.501 × 8', () => {
    const q = quote(catalog, 'seedance-2.5', final({ ...P, duration: 8 }));
    expect(q).toMatchObject({ priceMicros: micros('4.008'), billableSeconds: 8, sourceSeconds: 0, draftFinal: true, rateKey: '1080p' });
  });
  it('with client video in the draft: the with-video rate, source seconds not billed again: 0.299 × 5', () => {
    const q = quote(catalog, 'seedance-2.5', final({ ...P, duration: 5, video_urls: videoList(1) }), facts([6]));
    expect(q).toMatchObject({ priceMicros: micros('1.495'), billableSeconds: 5, withClientVideo: true });
  });
  it('an edit draft: the length of its clip, at 0.299: × 9', () => {
    const q = quote(catalog, 'seedance-2.5', final({ ...P, video_mode: 'edit', video_urls: videoList(1) }), facts([9]));
    expect(q.priceMicros).toBe(micros('2.691'));
  });
});

describe('quote: rounding up to 0.001 USD after multiplying (integer arithmetic)', () => {
  const withOverride = (price: unknown, model: string, input: Record<string, unknown>) => quote(buildCatalog({ models: { [model]: { price } } }), model, input);
  it('0.0525/s × 5 s = 0.2625 → 0.263', () => {
    expect(withOverride({ '720p': '0.0525' }, 'wan-2.7', { duration: 5 }).priceMicros).toBe(263_000);
  });
  it('an exact product is not rounded: 0.0524/s × 5 = 0.262', () => {
    expect(withOverride({ '720p': '0.0524' }, 'wan-2.7', { duration: 5 }).priceMicros).toBe(262_000);
  });
  it('one micro-dollar over a step rounds up a whole step: 0.040001 × 10 = 0.40001 → 0.401', () => {
    expect(withOverride({ '480p': '0.040001' }, 'wan-2.7', { resolution: '480p', duration: 10 }).priceMicros).toBe(401_000);
  });
  it('a tiny image price is at least 0.001', () => {
    expect(withOverride('0.000001', 'seedream-flash', {}).priceMicros).toBe(1000);
  });
  it('fractional seconds (calculator): 0.067 × 5.5 = 0.3685 → 0.369; 0.075 × 5.001 = 0.375075 → 0.376', () => {
    const ref = 'calc:ref';
    expect(quote(catalog, 'seedance-2.0-fast', { duration: 5, video_urls: [ref] }, { [ref]: { seconds: 0.5 } }).priceMicros).toBe(369_000);
    expect(quote(catalog, 'seedance-2.5', { duration: 5, resolution: '480p', video_urls: [ref] }, { [ref]: { seconds: 0.001 } }).priceMicros).toBe(376_000);
    expect(quote(catalog, 'seedance-2.0-fast', { duration: 5, resolution: '480p', video_urls: [ref] }, { [ref]: { seconds: 5 } }).priceMicros).toBe(310_000);
    // 0.1 + 0.2 seconds are exactly 0.3, not 0.30000000000000004: 0.031 × 5.3 = 0.1643 → 0.165
    expect(
      quote(
        catalog,
        'seedance-2.0-fast',
        { duration: 5, resolution: '480p', video_urls: [ref, 'calc:b'] },
        { [ref]: { seconds: 0.1 }, 'calc:b': { seconds: 0.2 } },
      ),
    ).toMatchObject({ priceMicros: 165_000, billableSeconds: 5.3 });
  });
});

describe('settleAutoLength (the refund of unused seconds)', () => {
  const input = validateInput(catalog, 'seedance-2.5', { ...P, duration: 'auto' }).input;
  it('re-prices from the real length rounded half up', () => {
    expect(settleAutoLength(catalog, 'seedance-2.5', input, {}, 12.4).priceMicros).toBe(micros('3.372'));
    expect(settleAutoLength(catalog, 'seedance-2.5', input, {}, 12.5)).toMatchObject({ priceMicros: micros('3.653'), resultSeconds: 13, autoLength: false });
  });
  it('keeps the source seconds: (8 + 10) × 0.299', () => {
    const v = validateInput(catalog, 'seedance-2.5', { ...P, duration: 'auto', resolution: '1080p', video_urls: videoList(1) }, facts([10]));
    expect(settleAutoLength(catalog, 'seedance-2.5', v.input, v.media!.facts, 7.5).priceMicros).toBe(micros('5.382'));
  });
  it('never charges more than the automatic maximum', () => {
    expect(settleAutoLength(catalog, 'seedance-2.5', input, {}, 31.7).priceMicros).toBe(micros('8.430'));
  });
  it('leaves a fixed length as charged', () => {
    const fixed = validateInput(catalog, 'seedance-2.5', P).input;
    expect(settleAutoLength(catalog, 'seedance-2.5', fixed, {}, 3).priceMicros).toBe(micros('1.405'));
  });
});

describe('quote refuses what it cannot price', () => {
  it('a video link without facts (not an upload)', () => {
    expect(() => quote(catalog, 'seedance-2.5', { duration: 5, video_urls: ['https://x/v.mp4'] })).toThrow(
      /^input\.video_urls\[0\] must be a link returned by POST/,
    );
  });
});
