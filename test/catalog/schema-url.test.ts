import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';
import { FAST } from '../tasks/support.js';

/** The model definition format's JSON Schema is served at a stable address, the same as the published file (issue 33 item 1). */
describe('GET /model-definition.schema.json', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer('sqlite', FAST);
  });
  afterAll(async () => {
    await s?.close();
  });

  it('answers the schema of docs/model-definition.schema.json, readable from any origin, without a key', async () => {
    const published = JSON.parse(readFileSync(new URL('../../docs/model-definition.schema.json', import.meta.url), 'utf8'));
    const r = await s.call('GET', '/model-definition.schema.json');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^application\/schema\+json/);
    expect(r.headers.get('access-control-allow-origin')).toBe('*');
    expect(r.body).toEqual(published);
    expect(r.body.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
  });
});
