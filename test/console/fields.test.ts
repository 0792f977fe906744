import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fieldsOf, inputOf, initialValues } from '../../console/src/schema-form.js';
import { startServer, type TestServer } from '../helpers/server.js';

/** The playground's form is made from the catalog's JSON Schema: every model gives a form, aliases stay hidden, defaults are not sent. */
describe('the playground form from the catalog schema', () => {
  let s: TestServer;
  let models: any[];
  beforeAll(async () => {
    s = await startServer('sqlite', { RUN_ENGINE: 'false' });
    models = (await s.call('GET', '/api/v1/models')).body.data;
  });
  afterAll(() => s.close());

  it('hides aliases and maps types to controls (google/nano-banana-edit)', () => {
    const m = models.find((x) => x.id === 'google/nano-banana-edit');
    const fields = fieldsOf(m.parameters);
    const by = Object.fromEntries(fields.map((f) => [f.name, f]));
    expect(Object.keys(by)).not.toContain('size'); // "Alias of aspect_ratio."
    expect(Object.keys(by)).not.toContain('image_urls'); // "Only under model ...": a kie.ai name
    expect(Object.keys(by)).not.toContain('nsfw_checker');
    expect(by.prompt).toMatchObject({ kind: 'textarea' });
    expect(by.image_input).toMatchObject({ kind: 'urls', maxItems: 10, accept: 'image/*' });
    expect(by.aspect_ratio).toMatchObject({ kind: 'select', default: 'auto' });
    expect(by.nsfw_check).toMatchObject({ kind: 'boolean', default: false });
    expect(by.seed).toMatchObject({ kind: 'number', min: -1, max: 4294967295 });
  });

  it('sends only what differs from the defaults, numbers as numbers', () => {
    const m = models.find((x) => x.id === 'seedance-2.0-fast');
    const fields = fieldsOf(m.parameters);
    const values = { ...initialValues(fields), prompt: 'waves', duration: '8', return_last_frame: true, video_urls: ['', ' http://x/v.mp4 '] };
    expect(inputOf(fields, values)).toEqual({ prompt: 'waves', duration: 8, return_last_frame: true, video_urls: ['http://x/v.mp4'] });
    expect(inputOf(fields, initialValues(fields))).toEqual({});
  });

  it('gives every model of the catalog a form with no alias and no unknown control', () => {
    for (const m of models) {
      const fields = fieldsOf(m.parameters);
      expect(fields.length, m.id).toBeGreaterThan(0);
      for (const f of fields) expect(f.description, `${m.id}.${f.name}`).not.toMatch(/^(Alias of|Only under model)/);
      const suno = fields.find((f) => f.name === 'duration' && f.kind === 'flex');
      if (m.id === 'suno-v6') expect(suno).toMatchObject({ options: ['auto'], min: 10, max: 360 });
    }
  });
});
