import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importModels } from '../../src/cli/models.js';
import { startSchemaFake } from '../fakes/schemas.js';
import { falDoc } from './import-docs.js';

/**
 * The shapes of an imported draft (decision 3303) that depend on the upstream's inputs and billing
 * unit: clip lists GenGate knows by one name (renamed back by the route), single clip links kept as
 * text, and the price built on the upstream's unit (per second of an integer duration, per
 * characters of the text, per megapixel noted). Documents in fal's queue OpenAPI shape, read from a
 * file with --doc where no price is needed.
 */

const dir = mkdtempSync(path.join(tmpdir(), 'gg-import-shapes-'));
const ENV = { FAL_KEY: 'k', GENGATE_CONFIG: '' };
type Def = { inputs: Record<string, Record<string, unknown>>; price: Record<string, unknown>; routes: Record<string, unknown>[] };

const video = falDoc('fal-ai/acme/reference-to-video', 'reference-to-video', 'Ref', {
  type: 'object',
  'x-fal-order-properties': ['prompt', 'reference_video_urls', 'video_url', 'audio_url', 'duration'],
  required: ['prompt'],
  properties: {
    prompt: { type: 'string', description: 'What happens.' },
    reference_video_urls: { type: 'array', items: { type: 'string' }, maxItems: 3, description: 'Clips to follow.' },
    video_url: { type: 'string', description: 'A clip to extend.' },
    audio_url: { type: 'string', format: 'uri', description: 'A sound track.' },
    duration: { type: 'integer', minimum: 4, maximum: 12, default: 5, description: 'Seconds.' },
  },
});
const speech = falDoc('fal-ai/acme/tts', 'text-to-speech', 'Tts', {
  type: 'object',
  required: ['text'],
  properties: {
    text: { type: 'string', maxLength: 5000, description: 'The words to say.' },
    voice: { type: 'string', enum: ['Aria', 'Roger'], default: 'Aria' },
  },
});
const megapixel = falDoc('fal-ai/acme/mp', 'text-to-image', 'Mp', {
  type: 'object',
  required: ['prompt'],
  properties: { prompt: { type: 'string', maxLength: 1000 } },
});

let fake: Awaited<ReturnType<typeof startSchemaFake>>;
beforeAll(async () => {
  fake = await startSchemaFake({
    fal: { 'fal-ai/acme/reference-to-video': video, 'fal-ai/acme/tts': speech, 'fal-ai/acme/mp': megapixel },
    falPrices: {
      'fal-ai/acme/reference-to-video': { unit_price: 0.1, unit: 'seconds' },
      'fal-ai/acme/tts': { unit_price: 0.05, unit: '1000 characters' },
      'fal-ai/acme/mp': { unit_price: 0.025, unit: 'megapixels' },
    },
    falKey: 'k',
  });
});
afterAll(() => fake.close());

async function draft(source: string, doc?: string): Promise<{ def: Def; text: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await importModels(
    source,
    { baseUrl: fake.url, pricingUrl: fake.url, ...(doc ? { doc } : {}) },
    (t) => out.push(t),
    (t) => err.push(t),
    ENV,
  );
  expect(code, err.join('\n')).toBe(0);
  return { def: parse(out.join('\n')) as Def, text: out.join('\n') };
}

describe('imported drafts by the upstream inputs and billing unit', () => {
  it('a clip list becomes video_urls with count and seconds, renamed back to the upstream name by the route; single clip links stay text', async () => {
    const { def, text } = await draft('fal:fal-ai/acme/reference-to-video');
    expect(Object.keys(def.inputs)).toEqual(['prompt', 'video_urls', 'video_url', 'audio_url', 'duration']);
    expect(def.inputs.video_urls).toMatchObject({ type: 'media', accepts: 'video', count: { max: 3 }, seconds: { total: 30 } });
    expect(def.routes[0]).toMatchObject({ as_is: true, map: { rename: { video_urls: 'reference_video_urls' } } });
    expect(text).toContain("# TODO: the upstream's reference_video_urls: GenGate knows this list as video_urls, and the route renames it back");
    expect(text).toContain('# TODO: GenGate checks, trims and bills clips by seconds: seconds.total is 30, set what the upstream takes');
    expect(def.inputs.video_url).toMatchObject({ type: 'text', max: 2000 });
    expect(def.inputs.audio_url).toMatchObject({ type: 'text', max: 2000 });
    expect(text).toContain("# TODO: a single audio link is kept as text (GenGate's audio inputs are lists named audio_urls): it is passed on unchecked");
  });

  it('per second of an integer duration with a default, when the upstream bills per second', async () => {
    const { def, text } = await draft('fal:fal-ai/acme/reference-to-video');
    expect(def.inputs.duration).toMatchObject({ type: 'integer', min: 4, max: 12, default: 5 });
    expect(def.price).toEqual({ unit: 'second', rate: 'SET-PRICE' });
    expect(text).toContain('# Billed per second of duration, as fal bills ($0.1 a second).');
  });

  it('per 1000 characters of the required text, when the upstream bills per characters', async () => {
    const { def } = await draft('fal:fal-ai/acme/tts');
    expect(def).toMatchObject({ kind: 'speech', price: { unit: 'characters', per: { field: 'text', block: 1000 }, rate: 'SET-PRICE' } });
  });

  it('per image with a note when the upstream bills per megapixel', async () => {
    const { def, text } = await draft('fal:fal-ai/acme/mp');
    expect(def.price).toEqual({ unit: 'image', rate: 'SET-PRICE' });
    expect(text).toContain('# The upstream bills per megapixel: $0.025 is a 1-megapixel image; price the largest size you allow.');
  });

  it('reads a saved copy of the document with --doc (no network for the schema)', async () => {
    const file = path.join(dir, 'tts.json');
    writeFileSync(file, JSON.stringify(speech));
    const { def, text } = await draft('fal:fal-ai/acme/tts', file);
    expect(def.inputs.voice).toMatchObject({ type: 'choice', values: ['Aria', 'Roger'], default: 'Aria' });
    expect(text).toContain(`# from ${file}`);
    expect(fake.calls.filter((c) => c.path === '/api/openapi/queue/openapi.json' && c.query.get('endpoint_id') === 'fal-ai/acme/tts')).toHaveLength(1);
  });
});
