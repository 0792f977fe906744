import { describe, expect, it } from 'vitest';
import { buildCatalog, routeLimitRefusal, validateInput } from '../../src/catalog/index.js';
import { ConfigError } from '../../src/config.js';

const kie = { backend: 'kie', key_env: 'KIE_API_KEY' };
const suno = (routes: unknown[]) => buildCatalog({ models: { 'suno-v6': { routes } } });
const refusal = (routes: unknown[], input: Record<string, unknown>) => {
  const c = suno(routes);
  return routeLimitRefusal(c.find('suno-v6')!, validateInput(c, 'suno-v6', input).input);
};

/** Issue 36 item 4, decision 2503: inputs a route's upstream refuses, declared with the route or for its kind in the definition. */
describe('per-route input limits', () => {
  it("suno-v6 on a kie route: kie.ai's Suno limits from the definition (prompt ≤ 500 without custom mode, style required in custom mode)", () => {
    const long = 'la '.repeat(200);
    expect(refusal([kie], { prompt: long })).toBe(
      `input.prompt may be at most 500 characters when input.custom_mode is false: kie.ai's Suno API that suno-v6 runs on takes no more (got ${long.length})`,
    );
    expect(refusal([kie], { prompt: 'x'.repeat(500) })).toBeNull();
    expect(refusal([kie], { prompt: 'words', custom_mode: true, title: 'T' })).toBe(
      "input.style is required when input.custom_mode is true: kie.ai's Suno API that suno-v6 runs on requires it",
    );
    expect(refusal([kie], { prompt: long, custom_mode: true, title: 'T', style: 'jazz' })).toBeNull();
  });

  it('a model on the local backend (or another kind) keeps the model’s own limits; every route the task may reach counts', () => {
    const long = 'x'.repeat(3000);
    expect(refusal([{ backend: 'local' }], { prompt: long })).toBeNull();
    expect(refusal([{ backend: 'same-api', base_url: 'https://up.example.com', key_env: 'UP_KEY' }], { prompt: long })).toBeNull();
    expect(refusal([{ backend: 'local' }, kie], { prompt: long })).toMatch(/at most 500 characters/);
  });

  it("a route's own limits replace the definition's for that route", () => {
    const own = { ...kie, limits: [{ max_length: { title: 10 }, upstream: 'our proxy' }] };
    expect(refusal([own], { prompt: 'x'.repeat(3000) })).toBeNull();
    expect(refusal([own], { prompt: 'p', custom_mode: true, title: 'a long title', style: 's' })).toBe(
      'input.title may be at most 10 characters: our proxy that suno-v6 runs on takes no more (got 12)',
    );
  });

  it('refuses limits that name no input field or have no effect, naming the field', () => {
    expect(() => suno([{ ...kie, limits: [{ max_length: { lyrics: 10 } }] }])).toThrow(ConfigError);
    expect(() => suno([{ ...kie, limits: [{ max_length: { lyrics: 10 } }] }])).toThrow(/routes\[0\]\.limits\[0\]: lyrics is not an input field of suno-v6/);
    expect(() => suno([{ ...kie, limits: [{ when: { custom_mode: true } }] }])).toThrow(/limits\[0\]: must say max_length or required/);
    expect(() => suno([{ ...kie, limits: [{ max_length: { prompt: -1 } }] }])).toThrow(/limits\[0\]\.max_length\.prompt: must be a whole number/);
  });
});
