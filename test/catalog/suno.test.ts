import { describe, expect, it } from 'vitest';
import { accepts, refuses } from './support.js';

/** One accepting and one refusing case for every row of the SPEC table "Music model suno-v6", and its custom-mode rules. */

const M = 'suno-v6';
const SIMPLE = { prompt: 'a song about autumn in Lisbon' };
const CUSTOM = { custom_mode: true, title: 'Autumn', prompt: '[Verse]\nLeaves on the tram lines' };

describe('suno-v6 fields', () => {
  it('version: each listed value in custom mode, v6 by default; others refused', () => {
    for (const v of ['v6', 'v6-wild', 'v6-mini', 'v5.5', 'v5', 'v4.5-plus', 'v4.5-all', 'v4.5', 'v4']) {
      expect(accepts(M, { ...CUSTOM, version: v }).version).toBe(v);
    }
    expect(accepts(M, SIMPLE).version).toBe('v6');
    refuses(
      M,
      { ...CUSTOM, version: 'v7' },
      'input.version must be one of "v6", "v6-wild", "v6-mini", "v5.5", "v5", "v4.5-plus", "v4.5-all", "v4.5", "v4" for suno-v6 (got "v7")',
    );
  });
  it('prompt: the subject (up to 3000) without custom mode, the lyrics (up to 5000) with it', () => {
    expect(accepts(M, { prompt: 's'.repeat(3000) }).prompt).toHaveLength(3000);
    refuses(
      M,
      { prompt: 's'.repeat(3001) },
      'input.prompt must be a text of up to 3000 characters (the subject of the song without custom mode) for suno-v6 (got a text of 3001 characters)',
    );
    expect(accepts(M, { ...CUSTOM, prompt: 'l'.repeat(5000) }).prompt).toHaveLength(5000);
    refuses(
      M,
      { ...CUSTOM, prompt: 'l'.repeat(5001) },
      /^input\.prompt must be a text of up to 5000 characters for suno-v6 \(got a text of 5001 characters\)$/,
    );
    refuses(M, {}, /^input\.prompt is required for suno-v6 \(the subject of the song\); it must be a text/);
  });
  it('custom_mode: false by default, true enables the settings', () => {
    expect(accepts(M, SIMPLE).custom_mode).toBe(false);
    expect(accepts(M, { ...CUSTOM, custom_mode: 'true' }).custom_mode).toBe(true);
    refuses(M, { ...SIMPLE, custom_mode: 'sure' }, 'input.custom_mode must be true or false for suno-v6 (got "sure")');
  });
  it('instrumental: false by default; true allowed in both modes', () => {
    expect(accepts(M, SIMPLE).instrumental).toBe(false);
    expect(accepts(M, { ...SIMPLE, instrumental: true }).instrumental).toBe(true);
    refuses(M, { ...SIMPLE, instrumental: 1 }, /^input\.instrumental must be true or false .*\(got 1\)$/);
  });
  it.each([
    ['title', 80],
    ['style', 1000],
    ['negative_tags', 1000],
  ] as const)('%s: up to %i characters', (field, max) => {
    expect(accepts(M, { ...CUSTOM, [field]: 't'.repeat(max) })[field]).toHaveLength(max);
    refuses(
      M,
      { ...CUSTOM, [field]: 't'.repeat(max + 1) },
      `input.${field} must be a text of up to ${max} characters for suno-v6 (got a text of ${max + 1} characters)`,
    );
  });
  it('vocal_gender: auto, female, male', () => {
    for (const v of ['auto', 'female', 'male']) expect(accepts(M, { ...CUSTOM, vocal_gender: v }).vocal_gender).toBe(v);
    refuses(M, { ...CUSTOM, vocal_gender: 'robot' }, 'input.vocal_gender must be one of "auto", "female", "male" for suno-v6 (got "robot")');
  });
  it('duration: auto or 10 to 360 seconds, number or text', () => {
    expect(accepts(M, { ...CUSTOM, duration: 'auto' }).duration).toBe('auto');
    expect(accepts(M, { ...CUSTOM, duration: 10 }).duration).toBe(10);
    expect(accepts(M, { ...CUSTOM, duration: '360' }).duration).toBe(360);
    refuses(M, { ...CUSTOM, duration: 9 }, 'input.duration must be a whole number from 10 to 360, "auto" or -1 for suno-v6 (got 9)');
    refuses(M, { ...CUSTOM, duration: '361' }, /\(got "361"\)$/);
  });
  it('variety: auto, off, normal, high, extra, max', () => {
    for (const v of ['auto', 'off', 'normal', 'high', 'extra', 'max']) expect(accepts(M, { ...CUSTOM, variety: v }).variety).toBe(v);
    refuses(M, { ...CUSTOM, variety: 'wild' }, 'input.variety must be one of "auto", "off", "normal", "high", "extra", "max" for suno-v6 (got "wild")');
  });
  it.each(['style_weight', 'weirdness_constraint', 'audio_weight'])('%s: auto, or 0 to 1 in steps of 0.05', (field) => {
    for (const [sent, got] of [
      ['auto', 'auto'],
      [0, 0],
      [1, 1],
      [0.05, 0.05],
      ['0.35', 0.35],
      [0.15, 0.15],
      ['.9', 0.9],
      [0.7, 0.7],
    ] as const) {
      expect(accepts(M, { ...CUSTOM, [field]: sent })[field]).toBe(got);
    }
    for (const bad of [0.33, 1.05, -0.05, '0.051', 'high', true]) {
      refuses(M, { ...CUSTOM, [field]: bad }, new RegExp(`^input\\.${field} must be "auto" or a number from 0 to 1 in steps of 0\\.05 for suno-v6 \\(got `));
    }
  });
  it('nsfw_check: the common field, in both modes', () => {
    expect(accepts(M, { ...SIMPLE, nsfw_check: true }).nsfw_check).toBe(true);
    refuses(M, { ...SIMPLE, nsfw_check: 'x' }, /^input\.nsfw_check must be true or false/);
  });
});

describe('suno-v6 rules', () => {
  it('settings other than prompt, custom_mode and instrumental need custom_mode true', () => {
    for (const [field, value] of [
      ['version', 'v5'],
      ['title', 'T'],
      ['style', 'jazz'],
      ['negative_tags', 'drums'],
      ['vocal_gender', 'male'],
      ['duration', 60],
      ['variety', 'high'],
      ['style_weight', 0.5],
      ['weirdness_constraint', 0.5],
      ['audio_weight', 0.5],
    ] as const) {
      refuses(
        M,
        { ...SIMPLE, [field]: value },
        `input.${field} applies only when input.custom_mode is true for suno-v6; without custom mode only prompt, instrumental and nsfw_check are used (got custom_mode false)`,
      );
    }
  });
  it('title is required with custom mode', () => {
    refuses(
      M,
      { custom_mode: true, prompt: 'lyrics' },
      /^input\.title is required for suno-v6 when input\.custom_mode is true; it must be a text of up to 80 characters \(got nothing\)$/,
    );
  });
  it('lyrics are required with custom mode unless instrumental', () => {
    refuses(
      M,
      { custom_mode: true, title: 'T' },
      /^input\.prompt is required for suno-v6 \(the lyrics\) when input\.custom_mode is true and input\.instrumental is false/,
    );
    expect(accepts(M, { custom_mode: true, title: 'T', instrumental: true, style: 'ambient' })).toMatchObject({ instrumental: true, style: 'ambient' });
  });
  it('audio_weight is not for instrumental tracks', () => {
    refuses(
      M,
      { ...CUSTOM, instrumental: true, audio_weight: 0.5 },
      'input.audio_weight does not apply to instrumental tracks for suno-v6; leave it out (got instrumental true)',
    );
    expect(accepts(M, { ...CUSTOM, instrumental: false, audio_weight: 0.5 }).audio_weight).toBe(0.5);
  });
  it('has no size alias (no aspect ratio) and refuses unknown fields by name', () => {
    refuses(M, { ...SIMPLE, size: '1:1' }, /^input\.size is not an input field of suno-v6; its fields are: version, prompt, custom_mode/);
    refuses(M, { ...SIMPLE, model: 'v6' }, /^input\.model is not an input field of suno-v6/);
  });
});
