import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/errors.js';
import { modelNames, normalisedSchema, validateInput, type MediaFacts } from '../../src/catalog/index.js';
import { quote } from '../../src/pricing/index.js';
import { BASE, catalog, video } from './support.js';

/**
 * Random JSON only ever yields a valid, normalised input or a precise refusal (an AppError whose
 * msg names the field and the model) — never another throw. Valid results match the model's zod
 * schema, validate again to themselves, and can be priced.
 */

const names = modelNames(catalog);
const fieldNames = [...new Set(catalog.models.flatMap((m) => [...m.fields.keys()]))];
const interesting = fc.constantFrom<unknown>(
  '5',
  5,
  15,
  30,
  'auto',
  -1,
  '-1',
  '',
  ' ',
  null,
  true,
  false,
  'true',
  'FALSE',
  0.05,
  0.33,
  '0.35',
  1e21,
  -0,
  '480p',
  '720p',
  '1080p',
  '1K',
  '4K',
  '16:9',
  'adaptive',
  'edit',
  'reference',
  'extend',
  'v5',
  'high',
  'mov',
  'https://img.example.com/a.jpg',
  'asset://x1',
  `${BASE}/files/v0/clip.mp4`,
  [`${BASE}/files/v0/clip.mp4`],
  ['https://img.example.com/a.png', 'https://img.example.com/b.gif'],
  [{ type: 'web_search' }],
  [{ type: 'x' }],
  [],
  'x'.repeat(3001),
  '🎵'.repeat(10),
  { nested: [1, 2] },
);
const value = fc.oneof(interesting, fc.jsonValue({ maxDepth: 2 }), fc.array(fc.oneof(fc.webUrl(), fc.string()), { maxLength: 12 }));
const key = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...fieldNames) },
  { weight: 2, arbitrary: fc.constantFrom('size', 'tools', 'omni_reference_task_type', 'image_input', 'model', '__proto__', 'constructor') },
  { weight: 1, arbitrary: fc.string({ maxLength: 12 }) },
);
const input = fc.oneof({ weight: 8, arbitrary: fc.dictionary(key, value, { maxKeys: 8 }) }, { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) });
const model = fc.oneof({ weight: 9, arbitrary: fc.constantFrom(...names) }, { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 1 }) });
const media = fc.option(fc.constant<MediaFacts>({ [video(0)]: { kind: 'video', format: 'MP4', seconds: 7 } }), { nil: undefined });

function check(modelName: unknown, sent: unknown, facts: MediaFacts | undefined) {
  let result;
  try {
    result = validateInput(catalog, modelName, sent, facts, { uploadBaseUrl: BASE });
  } catch (e) {
    expect(e).toBeInstanceOf(AppError);
    const msg = (e as AppError).message;
    expect(msg).toMatch(/^(input|model)\b/);
    // Only a value the client sent may show these words (the msg quotes it: "(got {\"NaN\":0})").
    const words = /undefined|\[object Object\]|NaN/;
    if (!words.test(JSON.stringify([modelName ?? null, sent ?? null]))) expect(msg).not.toMatch(words);
    expect(msg.length).toBeLessThan(1200);
    const def = typeof modelName === 'string' ? catalog.find(modelName) : undefined;
    if (def && msg.startsWith('input.')) expect(msg).toContain(def.id);
    return;
  }
  const def = catalog.find(result.model)!;
  if (!result.draftFinal) {
    expect(normalisedSchema(def).safeParse(result.input).success).toBe(true);
    // Normalising is a fixed point: the normalised input validates to itself.
    expect(validateInput(catalog, result.model, result.input, facts, { uploadBaseUrl: BASE }).input).toEqual(result.input);
    const hasVideo = Array.isArray(result.input.video_urls);
    if (!hasVideo || result.media) {
      const q = quote(catalog, result.model, result.input, result.media?.facts);
      expect(q.priceMicros % 1000).toBe(0);
      expect(q.priceMicros).toBeGreaterThan(0);
    }
  }
}

describe('validation never throws anything but a precise AppError', () => {
  it('random JSON on random models', () => {
    fc.assert(fc.property(model, input, media, check), { numRuns: 4000 });
  });
  it('random values for the fields each model really has', () => {
    const perModel = fc.constantFrom(...catalog.models).chain((m) =>
      fc.tuple(
        fc.constant(m.id),
        fc.dictionary(fc.constantFrom(...m.fields.keys()), fc.oneof(interesting, value), { maxKeys: 6 }).map((d) => ({ prompt: 'a test prompt', ...d })),
        media,
      ),
    );
    fc.assert(
      fc.property(perModel, ([m, i, f]) => check(m, i, f)),
      { numRuns: 4000 },
    );
  });
});
