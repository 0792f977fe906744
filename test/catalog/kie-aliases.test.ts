import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config.js';
import { KIE_ALIASES, buildCatalog, hasInputMapping, modelEntry, parametersSchema, validateInput } from '../../src/catalog/index.js';
import { renderModelsDoc } from '../../src/catalog/doc.js';
import { quote } from '../../src/pricing/index.js';
import { BASE, accepts, audio, catalog, photo, refuses, validated, video } from './support.js';
import { KIE_CASES } from './kie-cases.js';

/** kie.ai model ids as aliases with input mappings (DECISIONS §18, KIE.md §1–§2, decision 0400). */

/** KIE.md §1, left column → middle column. */
const KIE_MD: Record<string, string> = {
  'google/nano-banana': 'google/nano-banana',
  'google/nano-banana-edit': 'google/nano-banana-edit',
  'nano-banana-2': 'nano-banana-2',
  'nano-banana-pro': 'nano-banana-pro',
  'gpt-image-2-text-to-image': 'gpt-image-2-text-to-image',
  'gpt-image-2-image-to-image': 'gpt-image-2-image-to-image',
  'seedream/5-pro-text-to-image': 'seedream-pro',
  'seedream/5-pro-image-to-image': 'seedream-pro',
  'seedream/5-lite-text-to-image': 'seedream-flash',
  'seedream/5-lite-image-to-image': 'seedream-flash',
  'bytedance/seedance-2-5': 'seedance-2.5',
  'bytedance/seedance-2': 'seedance-2.0',
  'bytedance/seedance-2-fast': 'seedance-2.0-fast',
  'bytedance/seedance-2-mini': 'seedance-2.0-mini',
  'bytedance/seedance-1.5-pro': 'seedance-1.5-pro',
  'grok-imagine/text-to-video': 'grok-imagine',
  'grok-imagine/image-to-video': 'grok-imagine',
  'grok-imagine-video-1-5-preview': 'grok-imagine-1.5',
  'wan/2-7-text-to-video': 'wan-2.7',
  'wan/2-7-image-to-video': 'wan-2.7',
};

/** Ids of KIE.md §1 that kie.ai prices and names differently from the GenGate model: market models of their own (decision 3310). */
const MARKET = ['gpt-image-2-text-to-image', 'gpt-image-2-image-to-image'];

describe('kie.ai model ids (KIE.md §1)', () => {
  it('every id of KIE.md §1 names its GenGate model in the default catalog, with an input mapping', () => {
    expect(Object.fromEntries(KIE_ALIASES.map((a) => [a.name, a.model]))).toEqual(
      Object.fromEntries(Object.entries(KIE_MD).filter(([kie]) => !MARKET.includes(kie))),
    );
    for (const kie of MARKET) {
      // kie.ai's own model with kie.ai's inputs (resolution 1K/2K/4K) and price, under the kie.ai id.
      expect(catalog.find(kie)!.id, kie).toBe(kie);
      expect(catalog.find(kie)!.source, kie).toMatch(/catalog\/kie\//);
    }
    for (const [kie, id] of Object.entries(KIE_MD).filter(([k]) => !MARKET.includes(k))) {
      const model = catalog.find(kie)!;
      expect(model.id, kie).toBe(id);
      expect(model.inputMaps.has(kie), kie).toBe(true);
      expect(hasInputMapping(catalog, kie), kie).toBe(true);
    }
    // How a task's param.model tells that it was created under a kie.ai id (for the kie dialect).
    for (const name of ['seedance-2.0-fast', 'vendor/nano-banana', 'wan-2.7', 'unknown']) expect(hasInputMapping(catalog, name), name).toBe(false);
    expect(KIE_CASES.map((c) => c.kie).sort()).toEqual(Object.keys(KIE_MD).sort());
  });

  it('ids of other models are not aliased (DECISIONS §18): the shipped ones are market models of their own (decision 3310)', () => {
    for (const other of ['kling-2.6/text-to-video', 'veo3']) expect(catalog.find(other), other).toBeUndefined();
    for (const market of ['wan/2-6-text-to-video', 'nano-banana-2-lite', 'seedream/4.5-text-to-image', 'sora-2-text-to-video']) {
      expect(catalog.find(market)!.id, market).toBe(market);
      expect(hasInputMapping(catalog, market), market).toBe(false);
    }
  });

  it.each(KIE_CASES)('$kie: the kie.ai body validates to the GenGate body and is priced the same', ({ kie, model, sent, gengate }) => {
    const mine = validated(kie, sent);
    const theirs = validated(model, gengate);
    expect(mine.model).toBe(model);
    expect(mine.input).toEqual(theirs.input);
    expect(quote(catalog, kie, mine.input)).toEqual(quote(catalog, model, theirs.input));
  });

  it('seedance 2.x reference videos and audio: the same facts, trims and price as video_urls and audio_urls', () => {
    const facts = { [video(0)]: { kind: 'video' as const, format: 'MP4', seconds: 7 }, [audio(0)]: { kind: 'audio' as const, format: 'MP3', seconds: 5 } };
    const mine = validated(
      'bytedance/seedance-2-fast',
      { prompt: 'x', reference_video_urls: [video(0)], reference_audio_urls: [audio(0)], duration: 5 },
      facts,
    );
    const theirs = validated('seedance-2.0-fast', { prompt: 'x', video_urls: [video(0)], audio_urls: [audio(0)], duration: 5 }, facts);
    expect(mine.input).toEqual(theirs.input);
    expect(mine.media).toEqual(theirs.media);
    // (5 s result + 7 s client video) × the with-client-video 720p rate $0.067/s.
    expect(quote(catalog, 'bytedance/seedance-2-fast', mine.input, mine.media?.facts).priceMicros).toBe(804_000);
  });
});

describe('refusals under a kie.ai id name the field as the client sent it (DECISIONS §18)', () => {
  it('values of mapped fields', () => {
    refuses(
      'google/nano-banana-edit',
      { prompt: 'x', image_urls: [photo(1, 'gif')] },
      /^input\.image_urls\[0\] must be a public https link .* for google\/nano-banana-edit; GIF is not accepted here/,
    );
    refuses('google/nano-banana', { prompt: 'x', image_size: '7:1' }, /^input\.image_size must be one of "1:1", .* for google\/nano-banana \(got "7:1"\)$/);
    refuses('gpt-image-2-image-to-image', { prompt: 'x' }, /^input\.input_urls is required/);
    refuses('gpt-image-2-image-to-image', { prompt: 'x', input_urls: 'https://img.example.com/a.png' }, /^input\.input_urls must be a list of 1 to 16 links/);
    refuses(
      'bytedance/seedance-1.5-pro',
      { prompt: 'x', input_urls: [photo(1), photo(2), photo(3)] },
      'input.input_urls must be a list of up to 2 links (first_frame_url, last_frame_url in that order) for bytedance/seedance-1.5-pro (seedance-1.5-pro) (got 3 links)',
    );
    refuses('bytedance/seedance-1.5-pro', { prompt: 'x', input_urls: [photo(1), 'ftp://x'] }, /^input\.input_urls\[1\] must be /);
    refuses('bytedance/seedance-1.5-pro', { prompt: 'x', fixed_lens: 'maybe' }, 'input.fixed_lens must be true or false for seedance-1.5-pro (got "maybe")');
    refuses(
      'grok-imagine/image-to-video',
      { prompt: 'x', image_urls: [photo(1), photo(2)] },
      /^input\.image_urls must be a list of one link for grok-imagine\/image-to-video \(grok-imagine\) \(got 2 links\)$/,
    );
    refuses('wan/2-7-text-to-video', { prompt: 'x', ratio: '4:3' }, /^input\.ratio must be one of "16:9", "9:16", "1:1" for wan-2\.7 \(got "4:3"\)$/);
    refuses('bytedance/seedance-2', { prompt: 'x', reference_audio_urls: [audio(0)] }, /^input\.reference_audio_urls needs at least one photo/);
    refuses('google/nano-banana', { prompt: 'x', nsfw_checker: 'sure' }, 'input.nsfw_checker must be true or false for google/nano-banana (got "sure")');
  });

  it('ignored fields are checked, then ignored', () => {
    expect(accepts('grok-imagine/text-to-video', { prompt: 'x', mode: 'SPICY' })).not.toHaveProperty('mode');
    refuses(
      'grok-imagine/text-to-video',
      { prompt: 'x', mode: 'wild' },
      'input.mode must be one of "fun", "normal", "spicy" for grok-imagine/text-to-video (grok-imagine) (got "wild")',
    );
    refuses('wan/2-7-image-to-video', { prompt: 'x', watermark: 3 }, 'input.watermark must be true or false for wan/2-7-image-to-video (wan-2.7) (got 3)');
    refuses('nano-banana-2', { prompt: 'x', google_search: 'yes' }, 'input.google_search must be true or false for nano-banana-2 (got "yes")');
  });

  it('fields that would change the price in a way GenGate has no price for are refused with the values it prices', () => {
    // Seedream 5's quality is mapped to the resolution GenGate prices (one price for all): basic is 2K, high is 4K (decision 3310).
    expect(accepts('seedream/5-pro-image-to-image', { prompt: 'x', image_urls: [photo(1)], quality: 'high' }).resolution).toBe('4K');
    expect(accepts('seedream/5-lite-text-to-image', { prompt: 'x', quality: 'basic' }).resolution).toBe('2K');
    refuses('seedream/5-lite-text-to-image', { prompt: 'x', quality: 'high' }, /^input\.quality must be one of "1K", "2K" for seedream-flash \(got "high"\)$/);
    // gpt-image-2 is kie.ai's own model, priced by its resolution.
    refuses(
      'gpt-image-2-text-to-image',
      { prompt: 'x', resolution: '8K' },
      /^input\.resolution must be one of "1K", "2K", "4K" for gpt-image-2-text-to-image \(got "8K"\)$/,
    );
    refuses('gpt-image-2-text-to-image', { prompt: 'x', quality: 'high' }, /^input\.quality is not an input field of gpt-image-2-text-to-image/);
    for (const kie of ['bytedance/seedance-2-5', 'bytedance/seedance-2', 'bytedance/seedance-1.5-pro']) {
      refuses(
        kie,
        { prompt: 'x', resolution: '4k' },
        new RegExp(`^input\\.resolution must be one of "480p", "720p", "1080p" for ${catalog.find(kie)!.id.replace(/\./g, '\\.')} \\(got "4k"\\)$`),
      );
    }
  });

  it('a name and its mapped name that disagree are refused; that agree are one value', () => {
    refuses(
      'google/nano-banana',
      { prompt: 'x', image_size: '1:1', aspect_ratio: '16:9' },
      'input.image_size and input.aspect_ratio mean the same for google/nano-banana but differ; send one of them (got "1:1" and "16:9")',
    );
    expect(accepts('google/nano-banana', { prompt: 'x', image_size: '1:1', aspect_ratio: '1:1' }).aspect_ratio).toBe('1:1');
  });

  it('an unknown field under a kie.ai id lists the names that id also takes', () => {
    refuses(
      'bytedance/seedance-2-mini',
      { prompt: 'x', reference_video_urls: [video(0)] },
      /^input\.reference_video_urls is not an input field of seedance-2\.0-mini; its fields are: .*; under bytedance\/seedance-2-mini also: nsfw_checker, reference_image_urls$/,
    );
    refuses(
      'seedream/5-pro-image-to-image',
      { prompt: 'x', image_urls: [photo(1)], size_class: '2K' },
      /; under seedream\/5-pro-image-to-image also: nsfw_checker, quality, image_urls$/,
    );
  });
});

describe('nothing changes under GenGate ids', () => {
  it('kie.ai names are not fields of the GenGate ids they map to', () => {
    refuses('grok-imagine', { prompt: 'x', mode: 'fun' }, /^input\.mode is not an input field of grok-imagine; its fields are: [^;]*$/);
    refuses(
      'grok-imagine',
      { prompt: 'x', image_urls: [photo(1)] },
      /^input\.image_urls is not an input field of grok-imagine \(to start from a photo use input\.first_frame_url\)/,
    );
    refuses('wan-2.7', { prompt: 'x', ratio: '9:16' }, /^input\.ratio is not an input field of wan-2\.7/);
    refuses('seedance-2.5', { prompt: 'x', nsfw_checker: true }, /^input\.nsfw_checker is not an input field of seedance-2\.5/);
    refuses('gpt-image-2.5-image-to-image', { prompt: 'x', input_urls: [photo(1)] }, /^input\.input_urls is not an input field/);
    refuses('vendor/nano-banana', { prompt: 'x', image_size: '1:1' }, /^input\.image_size is not an input field of google\/nano-banana/);
  });

  it('output_format "jpg" means "jpeg" under every name (DECISIONS §18)', () => {
    expect(accepts('seedream-pro', { prompt: 'x', output_format: 'jpg' }).output_format).toBe('jpeg');
    expect(accepts('gpt-image-2.5-text-to-image', { prompt: 'x', output_format: 'JPG' }).output_format).toBe('jpeg');
    refuses('seedance-2.5', { prompt: 'x', output_format: 'jpg' }, /^input\.output_format must be one of "mp4", "mov"/);
  });
});

describe('clients see the mappings', () => {
  it('the JSON Schema shows each mapped name with the names it applies under', () => {
    const props = parametersSchema(catalog.find('seedream-pro')!).properties as Record<string, any>;
    expect(props.image_urls).toMatchObject({ type: 'array', description: 'Only under model "seedream/5-pro-image-to-image": same as image_input.' });
    expect(props.nsfw_checker.description).toBe('Only under model "seedream/5-pro-text-to-image", "seedream/5-pro-image-to-image": same as nsfw_check.');
    expect(props.quality).toMatchObject({
      description: 'Only under model "seedream/5-pro-text-to-image", "seedream/5-pro-image-to-image": same as resolution.',
    });
    const grok = parametersSchema(catalog.find('grok-imagine')!).properties as Record<string, any>;
    expect(grok.mode).toMatchObject({ type: 'string', enum: ['fun', 'normal', 'spicy'] });
    expect(grok.image_urls).toMatchObject({ type: 'array', maxItems: 1 });
  });

  it('/models entries and docs/models.md list each mapping in words', () => {
    const entry = modelEntry(catalog.find('seedance-1.5-pro')!, { usdRubRate: 90, pricingBaseUrl: BASE });
    expect(entry.input_mappings).toEqual({
      'bytedance/seedance-1.5-pro': ['nsfw_checker → nsfw_check', 'input_urls (a list) → first_frame_url, last_frame_url', 'fixed_lens → camera_fixed'],
    });
    expect(modelEntry(catalog.find('higgsfield-genjutsu')!, { usdRubRate: 90, pricingBaseUrl: BASE }).input_mappings).toEqual({});
    expect(renderModelsDoc(catalog)).toContain(
      '- `seedream/5-pro-text-to-image`: `nsfw_checker` → `nsfw_check`; `quality` → `resolution` ("basic" → "2K", "high" → "4K").',
    );
  });
});

describe("operators' aliases with a mapping (catalog file)", () => {
  const wan26 = {
    name: 'wan/2-2-a14b-text-to-video-turbo',
    input: {
      ratio: 'aspect_ratio',
      nsfw_checker: 'nsfw_check',
      prompt_extend: { ignore: 'boolean' },
      image_urls: { to: ['first_frame_url'] },
      quality: { to: 'resolution', values: { sd: '480p', hd: '720p' } },
    },
  };

  it('an alias with a mapping is applied like a kie.ai id', () => {
    const c = buildCatalog({ models: { 'wan-2.7': { aliases: ['plain-wan', wan26] } } });
    const sent = { prompt: 'x', ratio: '1:1', prompt_extend: true, image_urls: [photo(1)], quality: 'HD' };
    const r = validateInput(c, 'wan/2-2-a14b-text-to-video-turbo', sent, undefined, { uploadBaseUrl: BASE });
    expect(r).toMatchObject({ model: 'wan-2.7', input: { aspect_ratio: '1:1', first_frame_url: photo(1), resolution: '720p' } });
    expect(c.find('wan-2.7')!.aliases).toEqual(
      expect.arrayContaining(['wan/2-7-text-to-video', 'wan/2-7-image-to-video', 'plain-wan', 'wan/2-2-a14b-text-to-video-turbo']),
    );
    expect(() => validateInput(c, 'plain-wan', { prompt: 'x', ratio: '1:1' })).toThrow(/input\.ratio is not an input field of wan-2\.7/);
    // The default kie.ai mappings stay; an operator may replace one by giving the alias again with its own.
    expect(validateInput(c, 'wan/2-7-text-to-video', { prompt: 'x', ratio: '1:1' }).input.aspect_ratio).toBe('1:1');
    const replaced = buildCatalog({ models: { 'wan-2.7': { aliases: [{ name: 'wan/2-7-text-to-video', input: { aspect: 'aspect_ratio' } }] } } });
    expect(() => validateInput(replaced, 'wan/2-7-text-to-video', { prompt: 'x', ratio: '1:1' })).toThrow(/input\.ratio is not an input field/);
  });

  it('the example of docs/backends.md loads and works as it says', () => {
    const doc = readFileSync(new URL('../../docs/backends.md', import.meta.url), 'utf8');
    const example = doc.slice(doc.indexOf('## Aliases with input mappings')).match(/```json\n([\s\S]*?)```/)![1]!;
    const c = buildCatalog(JSON.parse(example));
    const sent = { prompt: 'x', nsfw_checker: true, ratio: '9:16', image_urls: [photo(1)], quality: 'SD', prompt_extend: false, shot_type: 'multi' };
    expect(validateInput(c, 'wan/2-2-a14b-text-to-video-turbo', sent).input).toMatchObject({
      nsfw_check: true,
      aspect_ratio: '9:16',
      first_frame_url: photo(1),
      resolution: '480p',
    });
    expect(() => validateInput(c, 'wan/2-2-a14b-text-to-video-turbo', { prompt: 'x', audio_quality: 'hi' })).toThrow(
      /^input\.audio_quality is not priced by GenGate for wan\/2-2-a14b-text-to-video-turbo \(wan-2\.7\) \(got "hi"\); wan-2\.7 is priced by input\.resolution/,
    );
    expect(c.find('my-wan')!.id).toBe('wan-2.7');
  });

  it.each<[unknown, string | RegExp]>([
    [{ name: 'x/y', input: { ratio: 'aspect' } }, /aliases\[0\]\.input\.ratio: must be an input field of wan-2\.7 \(got "aspect"\); its fields: prompt, /],
    [{ name: 'x/y', input: { prompt: 'negative_prompt' } }, /aliases\[0\]\.input\.prompt: prompt is already an input field of wan-2\.7/],
    [{ name: 'x/y', input: { a: { to: [] } } }, /aliases\[0\]\.input\.a\.to: must name at least one field/],
    [{ name: 'x/y', input: { a: { ignore: 5 } } }, /aliases\[0\]\.input\.a\.ignore: must be "boolean" or a list/],
    [{ name: 'x/y', input: { a: { to: 'resolution', values: { sd: 1 } } } }, /aliases\[0\]\.input\.a\.values: must be an object of sent values/],
    [
      { name: 'x/y', input: { a: { rename: 'prompt' } } },
      /aliases\[0\]\.input\.a: must have "to" \(and "values"\), "ignore" or "instead" \(got the keys rename\)/,
    ],
    [{ name: 'x/y', input: [] }, /aliases\[0\]\.input: must be an object/],
    [{ name: 'has space' }, /aliases\[0\]\.name: must be a name of letters/],
    [{ name: 'x/y', map: {} }, /aliases\[0\]\.map: unknown field; an alias is \{"name", "input"\}/],
  ])('a wrong alias %j stops the start naming the field', (alias, message) => {
    let caught: unknown;
    try {
      buildCatalog({ models: { 'wan-2.7': { aliases: [alias] } } });
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(ConfigError);
    expect((caught as Error).message).toMatch(message);
  });
});
