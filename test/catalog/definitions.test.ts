import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config.js';
import { AppError } from '../../src/errors.js';
import { checkModels } from '../../src/cli/index.js';
import {
  DEFAULT_CATALOG_DIR,
  DEFAULT_MODELS,
  definitionJsonSchema,
  loadCatalog,
  makeCatalog,
  modelEntry,
  readDefinition,
  validateInput,
  type ModelDef,
} from '../../src/catalog/index.js';
import { quote } from '../../src/pricing/index.js';

/** Model definition files (docs/decisions/3300): the format, its checks with file:line, rules as data, prices, the operator's folder. */

function folder(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'gg-defs-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, name), text);
  return dir;
}

function check(target: string): { code: number; out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  const code = checkModels(
    target,
    (t) => out.push(t),
    (t) => err.push(t),
  );
  return { code, out, err };
}

/** A small image model; `extra` is appended (more inputs go under `inputs:` with 2 spaces). */
const HEAD = `id: test/model
title: Test model
kind: image
description: A model for tests.
inputs:
  prompt: { type: text, max: 100, description: What to draw., required: true }
`;
const FLAT = `price: { unit: image, rate: "0.010" }\n`;

function compile(text: string): ModelDef {
  const read = readDefinition('test.yaml', text);
  if (!read.model) throw new Error(read.problems.map((p) => `${p.line}: ${p.where}: ${p.why}`).join('\n'));
  return read.model;
}

function refusal(model: ModelDef, input: Record<string, unknown>): string {
  try {
    validateInput(makeCatalog([model]), model.id, input);
  } catch (e) {
    expect(e).toBeInstanceOf(AppError);
    return (e as AppError).message;
  }
  throw new Error('accepted');
}

describe('the shipped catalog', () => {
  it('is 19 definition files that gengate models check accepts', () => {
    const r = check(DEFAULT_CATALOG_DIR);
    expect(r.err).toEqual([]);
    expect(r.code).toBe(0);
    expect(r.out[0]).toMatch(/^ok: 19 definition\(s\): google\/nano-banana, /);
    expect(DEFAULT_MODELS.map((m) => m.source?.endsWith('.yaml'))).toEqual(DEFAULT_MODELS.map(() => true));
  });
  it('publishes the JSON Schema of the format in docs/ (regenerate: npm run docs:models)', () => {
    const published = JSON.parse(readFileSync('docs/model-definition.schema.json', 'utf8'));
    expect(published).toEqual(definitionJsonSchema());
  });
});

describe('gengate models check', () => {
  it.each([
    ['an unknown key', `${HEAD}  n: { type: integer, min: 1, max: 4, descripton: x }\n${FLAT}`, 7, 'inputs.n.descripton: unknown field descripton'],
    ['broken YAML', `${HEAD}  n: { type: integer, min: 1\n${FLAT}`, 8, 'not valid YAML: '],
    [
      'a price with no rate for a valid value',
      `${HEAD}  quality: { type: choice, values: [low, high], default: low, description: q }\nprice:\n  unit: image\n  by: quality\n  rates: { low: "0.01" }\n`,
      11,
      'price.rates: has no rate for quality "high" (every valid input needs a price)',
    ],
    [
      'a rate for a value the field does not have',
      `${HEAD}  quality: { type: choice, values: [low, high], description: q }\nprice:\n  unit: image\n  by: quality\n  rates:\n    low: "0.01"\n    high: "0.02"\n    ultra: "0.03"\n`,
      14,
      'price.rates.ultra: unknown quality tier; tiers: low, high',
    ],
    [
      'a default the field refuses',
      `${HEAD}  n: { type: integer, min: 1, max: 4, default: 9, description: n }\n${FLAT}`,
      7,
      'inputs.n.default: input.n must be a whole number from 1 to 4',
    ],
    [
      'an unknown named rule',
      `${HEAD}rules:\n  - named: no-such-rule\n${FLAT}`,
      8,
      'rules[0].named: unknown named rule "no-such-rule"; named rules: suno-custom-mode',
    ],
    [
      'a rule on a field the model lacks',
      `${HEAD}rules:\n  - { field: prompt, requires: [image] }\n${FLAT}`,
      8,
      'rules[0]: image is not an input field; fields: prompt',
    ],
    [
      'a condition value the field refuses',
      `${HEAD}  hd: { type: boolean, default: false, description: h }\nrules:\n  - { required: prompt, when: { hd: maybe } }\n${FLAT}`,
      9,
      'rules[0].when.hd: input.hd must be true or false',
    ],
    [
      'a per-second price without duration',
      `${HEAD}price: { unit: second, rate: "0.1" }\n`,
      7,
      'price.unit: a per-second price needs an integer input "duration"',
    ],
  ])('refuses %s with file:line and the reason', (_what, text, line, why) => {
    const dir = folder({ 'model.yaml': text });
    const r = check(dir);
    expect(r.code).toBe(1);
    expect(r.err[0]).toContain(`${path.join(dir, 'model.yaml')}:${line}: ${why}`);
    expect(r.err.at(-1)).toMatch(/^\d problem\(s\) in 1 file\(s\); 0 definition\(s\) fine$/);
  });
  it('checks a folder: each file on its own, JSON too, and a name used twice', () => {
    const json = JSON.stringify(
      {
        id: 'other',
        title: 'Other',
        kind: 'image',
        description: 'x',
        inputs: { prompt: { type: 'text', max: 9, description: 'p' } },
        price: { unit: 'run', rate: '0.5' },
      },
      null,
      2,
    );
    const dir = folder({ 'a.yaml': HEAD + FLAT, 'b.json': json, 'c.yaml': HEAD + FLAT, 'notes.txt': 'ignored' });
    const r = check(dir);
    expect(r.err[0]).toBe(`${path.join(dir, 'c.yaml')}:1: id: the name "test/model" is already used by test/model (${path.join(dir, 'a.yaml')})`);
    expect(r.code).toBe(1);
    expect(check(path.join(dir, 'b.json'))).toMatchObject({ code: 0, out: ['ok: 1 definition(s): other'] });
    expect(check(path.join(dir, 'missing.yaml')).err[0]).toMatch(/missing\.yaml: cannot read: ENOENT/);
  });
});

describe('rules as data', () => {
  const model = compile(`${HEAD.replace(', required: true', '')}  hd: { type: boolean, default: false, description: h }
  style: { type: text, max: 50, description: s }
  mode: { type: choice, values: [plain, photo], default: plain, description: m }
  photo_urls: { type: media, accepts: image, count: { max: 3 }, description: p }
  strength: { type: number, min: 0, max: 1, step: 0.05, default: 0.5, description: s }
  negative: { type: text, max: 50, description: n }
rules:
  - { required: prompt, when: { hd: false }, because: the scene }
  - { field: negative, requires: [style] }
  - { field: style, excludes: { hd: true } }
  - { fields: [strength], only_when: { mode: photo } }
  - { field: mode, needs: { photo: { one_of: [photo_urls], noun: photo } } }
${FLAT}`);
  it('say each rule in words for docs', () => {
    expect(model.rules.map((r) => r.note)).toEqual([
      'prompt is required when hd is false.',
      'negative only together with style.',
      'style does not apply when hd is true.',
      'strength applies only when mode is "photo".',
      'mode "photo" needs photo_urls.',
    ]);
  });
  it('refuse with messages naming the fields', () => {
    expect(refusal(model, {})).toBe(
      'input.prompt is required for test/model (the scene) when input.hd is false; it must be a text of up to 100 characters (got nothing)',
    );
    expect(refusal(model, { hd: true, negative: 'x' })).toBe(
      'input.negative is only accepted together with input.style for test/model (got input.negative and no input.style)',
    );
    expect(refusal(model, { hd: 'true', style: 'ink' })).toBe('input.style does not apply when input.hd is true for test/model; leave it out (got hd true)');
    expect(refusal(model, { prompt: 'x', strength: 0.7 })).toBe('input.strength applies only when input.mode is "photo" for test/model (got mode plain)');
    expect(refusal(model, { prompt: 'x', mode: 'PHOTO' })).toBe(
      'input.mode "photo" needs at least one photo in input.photo_urls for test/model (got no photo_urls)',
    );
    expect(refusal(model, { prompt: 'x', strength: '0.33' })).toBe('input.strength must be a number from 0 to 1 in steps of 0.05 for test/model (got "0.33")');
  });
  it('accept what fits; a setting sent as its default counts as not sent', () => {
    const catalog = makeCatalog([model]);
    expect(validateInput(catalog, model.id, { hd: true }).input).toMatchObject({ hd: true, mode: 'plain', strength: 0.5 });
    expect(validateInput(catalog, model.id, { prompt: 'x', strength: '0.5' }).input.strength).toBe(0.5);
    expect(validateInput(catalog, model.id, { prompt: 'x', mode: 'photo', strength: '0.35', photo_urls: ['https://p.example.com/a.png'] }).input.strength).toBe(
      0.35,
    );
  });
});

describe('prices as data', () => {
  it('a table over two enum fields (Wan 2.6 style: resolution × duration given as text)', () => {
    const model = compile(`${HEAD.replace('kind: image', 'kind: video')}  resolution: { type: choice, values: [720p, 1080p], default: 720p, description: r }
  duration: { type: choice, values: ["5", "10"], default: "5", description: d }
price:
  unit: run
  by: [resolution, duration]
  rates:
    720p: { "5": "0.25", "10": "0.40" }
    1080p: { "5": "0.40", "10": "0.60" }
`);
    const catalog = makeCatalog([model]);
    const input = validateInput(catalog, model.id, { prompt: 'x', resolution: '1080p', duration: 10 }).input;
    expect(quote(catalog, model.id, input)).toMatchObject({ rateKey: '1080p|10', priceMicros: 600_000 });
    const entry = modelEntry(model, { usdRubRate: 100, pricingBaseUrl: 'http://x' });
    expect(entry.pricing.display).toBe('720p 5 $0.250 per run · 720p 10 $0.400 per run · 1080p 5 $0.400 per run · 1080p 10 $0.600 per run');
    expect(entry.pricing.tiers[1]!.when).toEqual({ resolution: '720p', duration: '10' });
  });
  it('a speech model priced per 1000 characters of its text (ElevenLabs style), and per unit of a count field', () => {
    const speech = compile(`id: tts
title: TTS
kind: speech
description: Text to speech.
inputs:
  text: { type: text, max: 5000, description: What to say., required: true }
  voice: { type: choice, values: [Rachel, Adam], default: Rachel, description: Voice. }
  stability: { type: number, min: 0, max: 1, default: 0.5, description: Stability. }
price: { unit: characters, per: { field: text, block: 1000 }, rate: "0.05" }
demo: { prompt: text }
`);
    const catalog = makeCatalog([speech]);
    const input = validateInput(catalog, 'tts', { text: 'é'.repeat(1500) }).input;
    expect(quote(catalog, 'tts', input)).toMatchObject({ unit: 'characters', units: 1.5, priceMicros: 75_000 });
    expect(modelEntry(speech, { usdRubRate: 100, pricingBaseUrl: 'http://x' })).toMatchObject({
      kind: 'speech',
      pricing: { display: '$0.050 per 1000 characters' },
    });
    expect(speech.demo).toEqual({ prompt: 'text' });
    const images = compile(
      `${HEAD}  n: { type: integer, min: 1, max: 4, default: 1, description: How many. }\nprice: { unit: image, per: { field: n }, rate: "0.02" }\n`,
    );
    const c2 = makeCatalog([images]);
    expect(quote(c2, images.id, validateInput(c2, images.id, { prompt: 'x', n: 3 }).input).priceMicros).toBe(60_000);
  });
});

describe('GENGATE_MODELS: definition files of the operator', () => {
  const wan = readFileSync(path.join(DEFAULT_CATALOG_DIR, '11-wan-2-7.yaml'), 'utf8').replace('title: Wan 2.7', 'title: Wan 2.7 (ours)');
  it('adds models after the shipped ones and replaces a shipped one in place; GENGATE_CATALOG edits apply on top', () => {
    const dir = folder({ 'a.yaml': HEAD + FLAT, 'b.yaml': wan });
    const overrides = path.join(folder({}), 'catalog.json');
    writeFileSync(overrides, JSON.stringify({ models: { 'test/model': { price: '0.02' } } }));
    const catalog = loadCatalog({ GENGATE_MODELS: dir, GENGATE_CATALOG: overrides });
    expect(catalog.models.map((m) => m.id).slice(-1)).toEqual(['test/model']);
    expect(catalog.find('wan-2.7')!.title).toBe('Wan 2.7 (ours)');
    expect(catalog.models.findIndex((m) => m.id === 'wan-2.7')).toBe(DEFAULT_MODELS.findIndex((m) => m.id === 'wan-2.7'));
    expect(quote(catalog, 'test/model', { prompt: 'x' }).priceMicros).toBe(20_000);
  }, 240_000);
  it('a broken file stops the start with every file:line and reason', () => {
    const dir = folder({ 'a.yaml': HEAD + FLAT, 'b.yaml': `${HEAD}price: { unit: image }\n` });
    expect(() => loadCatalog({ GENGATE_MODELS: dir })).toThrow(ConfigError);
    expect(() => loadCatalog({ GENGATE_MODELS: dir })).toThrow(
      `GENGATE_MODELS ${dir}:\n${path.join(dir, 'b.yaml')}:7: price: needs either rate (one flat price) or by and rates (a table over enum fields)`,
    );
  }, 240_000);
});

describe('docs/models.md "Add a model in five minutes"', () => {
  it('shows a definition that gengate models check accepts', () => {
    const doc = readFileSync('docs/models.md', 'utf8');
    const example = /```yaml\n([\s\S]*?)```/.exec(doc)![1]!.replace(/^ {3}/gm, '');
    const r = check(folder({ 'my-model.yaml': example }));
    expect(r.err).toEqual([]);
    expect(r.out).toEqual(['ok: 1 definition(s): acme/text-to-image']);
  });
});
