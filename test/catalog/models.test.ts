import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/errors.js';
import { normalisedSchema, validateInput } from '../../src/catalog/index.js';
import { accepts, catalog, photo, photos, refuses } from './support.js';

/** The 19 models: ids and aliases, catalog consistency, and the schemas of the 15 models SPEC does not show. */

/** The built-in models; the kie.ai market's (catalog/kie/) are tested in kie-market.test.ts. */
const BUILT_IN = catalog.models.filter((m) => !m.source?.includes('/catalog/kie/'));

const SPEC_IDS = [
  'vendor/nano-banana',
  'vendor/nano-banana-edit',
  'nano-banana-2',
  'nano-banana-pro',
  'seedream-pro',
  'seedream-flash',
  'gpt-image-2.5-text-to-image',
  'gpt-image-2.5-image-to-image',
  'wan-3.0',
  'higgsfield-genjutsu',
  'wan-2.7',
  'seedance-2.5',
  'seedance-2.0',
  'seedance-2.0-fast',
  'seedance-2.0-mini',
  'seedance-1.5-pro',
  'grok-imagine-1.5',
  'grok-imagine',
  'suno-v6',
];

/** A minimal input every model accepts. */
function minimal(id: string): Record<string, unknown> {
  const model = catalog.find(id)!;
  const images = model.media.images;
  return {
    prompt: 'a lighthouse at dusk',
    ...(images && images.min > 0 ? { [images.field]: photos(images.min) } : {}),
  };
}

describe('the catalog', () => {
  it('knows every model id of the SPEC, vendor ids as aliases of google/ ids (DECISIONS §4)', () => {
    expect(BUILT_IN).toHaveLength(19);
    for (const id of SPEC_IDS) expect(catalog.find(id), id).toBeDefined();
    expect(catalog.find('vendor/nano-banana')?.id).toBe('google/nano-banana');
    expect(catalog.find('vendor/nano-banana-edit')?.id).toBe('google/nano-banana-edit');
    expect(validateInput(catalog, 'vendor/nano-banana', { prompt: 'x' }).model).toBe('google/nano-banana');
  });
  it('has a rate for every value of the field that sets the price, and with-video rates where clients supply video', () => {
    for (const m of BUILT_IN) {
      const by = m.price.by;
      if (by) {
        const values = (m.fields.get(by)!.schema as unknown as { unwrap?: () => { options: string[] } }).unwrap?.().options ?? [];
        expect(values.length, m.id).toBeGreaterThan(0);
        for (const v of values) expect(m.price.rates[v] ?? m.price.sameAs?.[v], `${m.id} ${v}`).toBeDefined();
      }
      expect(Boolean(m.price.withVideo), m.id).toBe(Boolean(m.media.videos));
      if (m.price.withVideo) expect(Object.keys(m.price.withVideo)).toEqual(Object.keys(m.price.rates));
      expect(m.routes).toEqual([{ backend: 'local' }]);
      expect(m.enabled).toBe(true);
    }
  });
  it.each(BUILT_IN.map((m) => m.id))('%s: a minimal input validates, defaults filled, and matches its zod schema', (id) => {
    const model = catalog.find(id)!;
    const out = accepts(id, minimal(id));
    for (const [name, f] of model.fields) if (f.default !== undefined) expect(out[name], name).toEqual(f.default);
    expect(normalisedSchema(model).safeParse(out).success).toBe(true);
  });
  it('refuses unknown and disabled models with their own kinds', () => {
    refuses(
      'seedance-3',
      {},
      // The built-in models' names, then a count of the rest (the kie.ai market's) rather than a list of every name.
      /^model must be one of google\/nano-banana, vendor\/nano-banana, .* or \d+ more names \(GET \/api\/v1\/models lists every model\) \(got "seedance-3"\)$/,
      undefined,
      'unsupported_model',
    );
    refuses(undefined as unknown as string, {}, /^model is required/, undefined, 'missing_field');
    refuses('suno-v6', undefined, /^input is required; an object of the input fields of suno-v6$/, undefined, 'missing_field');
    refuses('suno-v6', ['a'], /^input must be an object of the input fields of suno-v6 \(got \["a"\]\)$/);
  });
});

describe('image models (DECISIONS §11 schemas)', () => {
  it('google/nano-banana: prompt, aspect ratio, format; no photos', () => {
    expect(accepts('google/nano-banana', { prompt: 'x', size: '16:9', output_format: 'JPEG' })).toMatchObject({ aspect_ratio: '16:9', output_format: 'jpeg' });
    refuses(
      'google/nano-banana',
      { prompt: 'x', image_input: [photo(1)] },
      /^input\.image_input is not an input field of google\/nano-banana \(this model takes no photos\)/,
    );
    refuses('google/nano-banana', {}, /^input\.prompt is required for google\/nano-banana; it must be a text of up to 5000 characters \(got nothing\)$/);
  });
  it('google/nano-banana-edit: 1 to 10 photos required', () => {
    expect(accepts('vendor/nano-banana-edit', { prompt: 'make it night', image_input: photos(10) }).image_input).toHaveLength(10);
    refuses('google/nano-banana-edit', { prompt: 'x' }, /^input\.image_input is required for google\/nano-banana-edit; it must be a list of 1 to 10 links/);
    refuses(
      'google/nano-banana-edit',
      { prompt: 'x', image_input: [] },
      'input.image_input must be a list of 1 to 10 links for google/nano-banana-edit (got 0 links)',
    );
    // Under its kie.ai id (the same as the GenGate id) image_urls is image_input (DECISIONS §18); under the vendor alias it is not.
    refuses('vendor/nano-banana-edit', { prompt: 'x', image_urls: [photo(1)] }, /\(photos go in input\.image_input\)/);
  });
  it.each(['nano-banana-2', 'nano-banana-pro'])('%s: resolution 1K (default), 2K, 4K; up to 14 photos', (id) => {
    expect(accepts(id, { prompt: 'x' }).resolution).toBe('1K');
    expect(accepts(id, { prompt: 'x', resolution: '4k', image_input: photos(14) }).resolution).toBe('4K');
    refuses(id, { prompt: 'x', resolution: '8K' }, `input.resolution must be one of "1K", "2K", "4K" for ${id} (got "8K")`);
    refuses(id, { prompt: 'x', image_input: photos(15) }, /up to 14 links .*\(got 15 links\)$/);
  });
  it('seedream-pro and seedream-flash: resolutions and up to 10 photos', () => {
    expect(accepts('seedream-pro', { prompt: 'x', resolution: '4K' }).resolution).toBe('4K');
    expect(accepts('seedream-flash', { prompt: 'x' }).resolution).toBe('1K');
    refuses('seedream-flash', { prompt: 'x', resolution: '4K' }, 'input.resolution must be one of "1K", "2K" for seedream-flash (got "4K")');
    refuses('seedream-pro', { prompt: 'x', image_input: photos(11) }, /up to 10 links/);
  });
  it('gpt-image-2.5: quality auto (default), low, medium, high; no seed; edit needs 1 to 16 photos', () => {
    expect(accepts('gpt-image-2.5-text-to-image', { prompt: 'x' })).toMatchObject({ quality: 'auto', aspect_ratio: '1:1' });
    expect(accepts('gpt-image-2.5-image-to-image', { prompt: 'x', image_input: photos(16), quality: 'HIGH' }).quality).toBe('high');
    refuses(
      'gpt-image-2.5-text-to-image',
      { prompt: 'x', quality: 'ultra' },
      'input.quality must be one of "auto", "low", "medium", "high" for gpt-image-2.5-text-to-image (got "ultra")',
    );
    refuses('gpt-image-2.5-text-to-image', { prompt: 'x', seed: 1 }, /^input\.seed is not an input field/);
    refuses('gpt-image-2.5-image-to-image', { prompt: 'x', image_input: photos(17) }, /1 to 16 links/);
  });
});

describe('other video models (DECISIONS §11 schemas)', () => {
  it('wan-3.0: 5, 10 or 15 s; up to 1080p; negative prompt', () => {
    expect(accepts('wan-3.0', { prompt: 'x', duration: '15', resolution: '1080p', negative_prompt: 'blur' })).toMatchObject({
      duration: 15,
      generate_audio: true,
    });
    refuses('wan-3.0', { prompt: 'x', duration: 7 }, 'input.duration must be one of 5, 10, 15 for wan-3.0 (got 7)');
    refuses('wan-3.0', { prompt: 'x', negative_prompt: 'n'.repeat(501) }, /up to 500 characters/);
  });
  it('wan-2.7: 5 or 10 s', () => {
    expect(accepts('wan-2.7', { prompt: 'x', duration: 10 }).duration).toBe(10);
    refuses('wan-2.7', { prompt: 'x', duration: 15 }, /must be one of 5, 10 for wan-2\.7 \(got 15\)$/);
  });
  it('higgsfield-genjutsu: 720p or 1080p, no last frame', () => {
    expect(accepts('higgsfield-genjutsu', { first_frame_url: photo(1) }).resolution).toBe('720p');
    refuses('higgsfield-genjutsu', { prompt: 'x', resolution: '480p' }, /one of "720p", "1080p"/);
    refuses('higgsfield-genjutsu', { prompt: 'x', last_frame_url: photo(1) }, /^input\.last_frame_url is not an input field/);
  });
  it('grok-imagine-1.5 and grok-imagine: durations and resolutions', () => {
    expect(accepts('grok-imagine-1.5', { prompt: 'x', duration: 15 }).duration).toBe(15);
    expect(accepts('grok-imagine', { prompt: 'x' }).duration).toBe(6);
    refuses('grok-imagine', { prompt: 'x', duration: 15 }, /one of 6, 10 for grok-imagine \(got 15\)$/);
    refuses('grok-imagine-1.5', { prompt: 'x', resolution: '1080p' }, /one of "480p", "720p"/);
  });
  it('seedance-2.0 takes 1080p and client video; 2.0-mini takes photos only', () => {
    expect(accepts('seedance-2.0', { prompt: 'x', resolution: '1080p' }).resolution).toBe('1080p');
    expect(accepts('seedance-2.0-mini', { prompt: 'x', image_urls: photos(9) }).image_urls).toHaveLength(9);
    refuses(
      'seedance-2.0-mini',
      { prompt: 'x', video_urls: [] },
      /^input\.video_urls is not an input field of seedance-2\.0-mini \(this model takes photos only\)/,
    );
    refuses('seedance-2.0-mini', { prompt: 'x', resolution: '1080p' }, /one of "480p", "720p"/);
  });
});

describe('null, empty and coercions (DECISIONS §11)', () => {
  it('null and empty text count as not sent; defaults apply', () => {
    expect(accepts('seedance-2.5', { prompt: 'x', resolution: null, last_frame_url: '', image_urls: [] })).toMatchObject({ resolution: '720p' });
    expect(accepts('seedance-2.5', { prompt: 'x', image_urls: [] }).image_urls).toBeUndefined();
  });
  it('never throws anything but AppError on odd JSON', () => {
    for (const input of [{ __proto__: { a: 1 } }, JSON.parse('{"__proto__": 5}'), { constructor: 1 }, { toString: 'x' }]) {
      expect(() => validateInput(catalog, 'seedance-2.5', input)).toSatisfy((fn: () => unknown) => {
        try {
          fn();
          return true;
        } catch (e) {
          return e instanceof AppError;
        }
      });
    }
  });
});
