import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { KIE_MARKET_DIR, definitionFiles, readDefinitions, validateInput } from '../../src/catalog/index.js';
import { quote } from '../../src/pricing/index.js';
import { catalog, photo } from './support.js';

/**
 * The kie.ai market shipped in catalog/kie/ (issue 33 item 5, decision 3310): every file is a valid
 * definition under kie.ai's id, says where its inputs and price come from and when they were read,
 * routes to kie.ai (optional, KIE_API_KEY) then the demo, and prices every valid input.
 */
const files = definitionFiles(KIE_MARKET_DIR);
const market = catalog.models.filter((m) => m.source?.includes('/catalog/kie/'));

/** The families issue 33 names and a kie.ai id of each this catalog ships (the rest are built-in models with kie.ai aliases). */
const FAMILIES: Record<string, string[]> = {
  'nano banana 2 lite': ['nano-banana-2-lite'],
  'seedream 4.5': ['seedream/4.5-text-to-image', 'seedream/4.5-edit'],
  'gpt-image-2': ['gpt-image-2-text-to-image', 'gpt-image-2-image-to-image'],
  'flux 2': ['flux-2/pro-text-to-image', 'flux-2/pro-image-to-image', 'flux-2/flex-text-to-image', 'flux-2/flex-image-to-image'],
  'seedance 1 pro and lite': [
    'bytedance/v1-pro-text-to-video',
    'bytedance/v1-pro-image-to-video',
    'bytedance/v1-lite-text-to-video',
    'bytedance/v1-lite-image-to-video',
  ],
  'wan 2.5': ['wan/2-5-text-to-video', 'wan/2-5-image-to-video'],
  'wan 2.6': ['wan/2-6-text-to-video', 'wan/2-6-image-to-video'],
  kling: ['kling/v2-5-turbo-text-to-video-pro', 'kling/v2-5-turbo-image-to-video-pro'],
  hailuo: ['hailuo/02-text-to-video-standard', 'hailuo/02-text-to-video-pro', 'hailuo/02-image-to-video-standard', 'hailuo/02-image-to-video-pro'],
  'sora 2': ['sora-2-text-to-video', 'sora-2-image-to-video'],
  elevenlabs: ['elevenlabs/text-to-speech-turbo-2-5', 'elevenlabs/text-to-speech-multilingual-v2', 'elevenlabs/sound-effect-v2'],
};

const definitions = new Map(readDefinitions(KIE_MARKET_DIR).definitions.map((d) => [d.id, d]));

/** A minimal input of a market model: its required fields filled (text, a photo link or a list of one). */
function minimal(id: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, f] of Object.entries(definitions.get(id)!.inputs)) {
    if (!f.required) continue;
    if (f.type === 'media') out[name] = f.count ? [photo(1)] : photo(1);
    else out[name] = 'a lighthouse at dusk';
  }
  return out;
}

describe('the kie.ai market (catalog/kie/)', () => {
  it('every file is a valid definition: no problem, as `gengate models check catalog/kie/` says', () => {
    const read = readDefinitions(KIE_MARKET_DIR);
    expect(read.problems).toEqual([]);
    expect(read.models.map((m) => m.id).sort()).toEqual(market.map((m) => m.id).sort());
    expect(files).toHaveLength(28);
  });

  it('ships the families issue 33 names under their kie.ai ids', () => {
    for (const [family, ids] of Object.entries(FAMILIES)) for (const id of ids) expect(catalog.find(id)?.id, `${family}: ${id}`).toBe(id);
    expect(Object.values(FAMILIES).flat().sort()).toEqual(market.map((m) => m.id).sort());
  });

  it.each(files)('%s says where its inputs and its price come from, and when they were read', (file) => {
    const text = readFileSync(file, 'utf8');
    expect(text).toMatch(/^# Id and input names: https:\/\/docs\.kie\.ai\/market\/\S+ .*as read \d{4}-\d{2}-\d{2}\)\.$/m);
    expect(text).toMatch(/^# Price: .*\$\d.*\(kie\.ai list price, as read \d{4}-\d{2}-\d{2};/m);
  });

  it.each(market.map((m) => m.id))('%s: routes to kie.ai under its own id when KIE_API_KEY is set, else the demo; a minimal input is priced', (id) => {
    const m = catalog.find(id)!;
    expect(m.routes).toEqual([{ backend: 'kie', model: id, keyEnv: 'KIE_API_KEY', asIs: true, optional: true }, { backend: 'local' }]);
    expect(m.aliases).toEqual([]);
    const v = validateInput(catalog, id, minimal(id));
    expect(v.model).toBe(id);
    expect(quote(catalog, id, v.input).priceMicros).toBeGreaterThan(0);
  });
});
