import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';
import { PRICE_KEY_JOIN } from '../../src/catalog/index.js';
import { UNLIMITED, taskEntries } from './support.js';

/** createTask charges exactly what the public calculator says, over a grid of models and parameters. */
describe('createTask and the calculator agree', () => {
  let s: TestServer;
  let key: string;
  beforeAll(async () => {
    s = await startServer('sqlite', { ...UNLIMITED, RUN_ENGINE: 'false' });
    key = (await s.account(10_000)).key;
  });
  afterAll(() => s.close());

  function grid(): Array<{ model: string; input: Record<string, unknown>; query: Record<string, string> }> {
    const out: Array<{ model: string; input: Record<string, unknown>; query: Record<string, string> }> = [];
    // A price per character of a text (ElevenLabs speech) has no calculator parameter: the calculator has no text to count.
    for (const model of s.services.catalog.models.filter((m) => m.price.unit !== 'characters')) {
      const by = model.price.by;
      // A table over several fields (the kie.ai market's resolution × duration): its keys join the values.
      const table = model.price.table ?? (by ? [by] : []);
      const photo = 'https://img.example.com/p/1.jpg';
      const photos = model.media.images && model.media.images.min > 0 ? { [model.media.images.field]: [photo] } : {};
      // kie.ai market models name their photo (image_url, a list image_urls / input_urls) and their text (text) their own way.
      const own: Record<string, unknown> = {};
      if (model.fields.has('image_url')) own.image_url = photo;
      if (model.fields.has('text')) own.text = 'agreement';
      const duration = model.fields.get('duration');
      const durations: unknown[] = model.price.unit === 'second' ? [duration?.default, ...(model.autoLengthSeconds ? ['auto', 30, 7] : [])] : [undefined];
      for (const tier of by ? Object.keys(model.price.rates) : ['*']) {
        for (const d of durations) {
          const input: Record<string, unknown> = { ...(model.fields.has('prompt') ? { prompt: 'agreement' } : {}), ...photos, ...own };
          const query: Record<string, string> = { model: model.id };
          const values = tier.split(PRICE_KEY_JOIN);
          if (by) table.forEach((f, i) => ([input[f], query[f]] = [values[i]!, values[i]!]));
          if (d !== undefined && model.price.unit === 'second') [input.duration, query.duration] = [d, String(d)];
          out.push({ model: model.id, input, query });
        }
      }
    }
    return out;
  }

  it('for every model, tier and a few durations', async () => {
    const cases = grid();
    expect(cases.length).toBeGreaterThan(40);
    for (const c of cases) {
      const created = await s.call('POST', '/api/v1/jobs/createTask', { key, body: { model: c.model, input: c.input } });
      expect(created.status, `${c.model} ${JSON.stringify(c.input)}: ${JSON.stringify(created.body)}`).toBe(200);
      const calc = await s.call('GET', `/v1/pricing/calculate?${new URLSearchParams(c.query)}`);
      expect(calc.status, JSON.stringify(calc.body)).toBe(200);
      const charged = -(await taskEntries(s, created.body.data.taskId)).charge!;
      expect(charged, `${c.model} ${JSON.stringify(c.query)}`).toBe(Math.round(calc.body.price_usd * 1_000_000));
    }
  });
});
