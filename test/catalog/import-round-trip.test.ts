import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseDocument } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkModels, importModels } from '../../src/cli/models.js';
import { dialects } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { hashOf } from '../media/helpers.js';
import { useUpstreamKit } from '../backends/helpers.js';
import { startFalFake } from '../fakes/fal.js';
import { startKieFake } from '../fakes/kie.js';
import { startReplicateFake } from '../fakes/replicate.js';
import { startSchemaFake } from '../fakes/schemas.js';
import { FAST, create, expectLedgerInvariant, hashOfLink, resultUrls, settle, taskEntries } from '../tasks/support.js';
import { FAL_VIDEO, KIE_MODEL, REPLICATE_MODEL, REPLICATE_VERSION, falVideo, kieMarkdown, replicateModel } from './import-docs.js';

/**
 * The whole path of an imported model (decision 3303): `gengate models import` drafts it from the
 * upstream's published schema (local fakes in the real shapes, test/fakes/schemas.ts), the operator
 * sets the price, `models check` passes, GENGATE_MODELS loads it, and createTask on it reaches the
 * fake upstream (test/fakes/fal.ts, replicate.ts, kie.ts) with the upstream's own input names and
 * values, charged the price the operator set.
 */

/** What an operator does with a draft: sets each price, and here points the route at the fake. */
function setPrice(file: string, prices: readonly string[], baseUrl: string): void {
  let text = readFileSync(file, 'utf8');
  for (const p of prices) text = text.replace(': SET-PRICE', `: "${p}"`);
  const doc = parseDocument(text);
  doc.setIn(['routes', 0, 'base_url'], baseUrl);
  writeFileSync(file, doc.toString());
}

describe.each(dialects())('import → set price → models check → GENGATE_MODELS → createTask reaches the upstream on %s', (dialect) => {
  const kit = useUpstreamKit();
  const dir = mkdtempSync(path.join(tmpdir(), 'gg-import-trip-'));
  let s: TestServer;
  let schemas: Awaited<ReturnType<typeof startSchemaFake>>;
  let fal: Awaited<ReturnType<typeof startFalFake>>;
  let replicate: Awaited<ReturnType<typeof startReplicateFake>>;
  let kie: Awaited<ReturnType<typeof startKieFake>>;

  beforeAll(async () => {
    schemas = await startSchemaFake({
      fal: { [FAL_VIDEO]: falVideo },
      falPrices: { [FAL_VIDEO]: { unit_price: 0.07, unit: 'seconds' } },
      falKey: 'fal-trip',
      replicate: { [REPLICATE_MODEL]: replicateModel },
      replicateToken: 'r8_trip',
      kie: { [KIE_MODEL]: kieMarkdown },
    });
    fal = await startFalFake('fal-trip', (_model, base) => ({ video: { url: `${base}/media/video.mp4`, content_type: 'video/mp4' } }));
    fal.media('video.mp4', kit.video, 'video/mp4');
    replicate = await startReplicateFake('r8_trip', (_model, base) => [`${base}/media/image.jpg`]);
    replicate.media('image.jpg', kit.image, 'image/jpeg');
    kie = await startKieFake('kie-trip');
    kie.media('image.jpg', kit.image, 'image/jpeg');

    const env = { FAL_KEY: 'fal-trip', REPLICATE_API_TOKEN: 'r8_trip', GENGATE_CONFIG: '' };
    const flags = { baseUrl: schemas.url, pricingUrl: schemas.url, out: dir };
    const err: string[] = [];
    for (const source of [`fal:${FAL_VIDEO}`, `replicate:${REPLICATE_MODEL}`, `kie:${KIE_MODEL}`]) {
      expect(
        await importModels(
          source,
          flags,
          () => {},
          (t) => err.push(t),
          env,
        ),
        err.join('\n'),
      ).toBe(0);
    }
    const problems: string[] = [];
    expect(
      checkModels(
        dir,
        () => {},
        (t) => problems.push(t),
      ),
    ).toBe(1);
    expect(problems.filter((p) => p.includes('is SET-PRICE: set your price'))).toHaveLength(3);

    setPrice(path.join(dir, 'fal-ai-acme-video-text-to-video.yaml'), ['0.45', '0.90'], fal.url);
    setPrice(path.join(dir, 'acme-flux-like.yaml'), ['0.004'], replicate.url);
    setPrice(path.join(dir, 'acme-kie-image.yaml'), ['0.03'], kie.url);
    const out: string[] = [];
    expect(
      checkModels(
        dir,
        (t) => out.push(t),
        (t) => out.push(t),
      ),
      out.join('\n'),
    ).toBe(0);
    expect(out).toEqual([`ok: 3 definition(s): ${REPLICATE_MODEL}, ${KIE_MODEL}, ${FAL_VIDEO}`]);

    s = await startServer(dialect, {
      ...FAST,
      GENGATE_MODELS: dir,
      ALLOW_PRIVATE_NETWORK: 'true',
      UPSTREAM_POLL_MS: '20',
      ENGINE_MAX_ATTEMPTS: '2',
      FAL_KEY: 'fal-trip',
      REPLICATE_API_TOKEN: 'r8_trip',
      KIE_API_KEY: 'kie-trip',
    });
    s.services.engine.start();
  });
  afterAll(async () => {
    await s?.close();
    await Promise.all([schemas?.close(), fal?.close(), replicate?.close(), kie?.close()]);
  });

  it("fal: the endpoint gets fal's names and values (duration as fal's text, defaults filled), charged the operator's price for the duration", async () => {
    const { key } = await s.account(10);
    const id = await create(s, key, FAL_VIDEO, { prompt: 'a paper boat', duration: '10', aspect_ratio: '9:16', guidance_scale: 5, seed: 42 });
    const t = await settle(s, key, id);
    expect(t.state, JSON.stringify(t)).toBe('success');
    const submit = fal.calls.find((c) => c.method === 'POST' && c.path === `/${FAL_VIDEO}`);
    expect(submit?.json).toEqual({ prompt: 'a paper boat', duration: '10', aspect_ratio: '9:16', resolution: '720p', guidance_scale: 5, seed: 42 });
    expect((await taskEntries(s, id)).charge).toBe(-900_000);
    expect(await hashOfLink(s, resultUrls(t)[0]!)).toBe(await hashOf(kit.video));
  });

  it('the imported inputs are validated as strictly as the shipped ones: a duration fal does not list is refused before any charge', async () => {
    const { key } = await s.account(10);
    const r = await s.call('POST', '/api/v1/jobs/createTask', { key, body: { model: FAL_VIDEO, input: { prompt: 'a boat', duration: '7' } } });
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ code: 400, msg: `input.duration must be one of "5", "10" for ${FAL_VIDEO} (got "7")` });
    expect(fal.calls.filter((c) => c.method === 'POST')).toHaveLength(1);
  });

  it("Replicate: the pinned version gets Replicate's names, its defaults and num_outputs 1 from the route", async () => {
    const { key } = await s.account(10);
    const id = await create(s, key, REPLICATE_MODEL, { prompt: 'a lighthouse', aspect_ratio: '16:9', go_fast: false });
    const t = await settle(s, key, id);
    expect(t.state, JSON.stringify(t)).toBe('success');
    const created = replicate.calls.find((c) => c.method === 'POST' && c.path === '/v1/predictions');
    expect(created?.json).toMatchObject({
      version: REPLICATE_VERSION,
      input: { prompt: 'a lighthouse', aspect_ratio: '16:9', output_format: 'webp', go_fast: false, output_quality: 80, num_outputs: 1 },
    });
    expect(Object.keys((created?.json as { input: object }).input).sort()).toEqual([
      'aspect_ratio',
      'go_fast',
      'num_outputs',
      'output_format',
      'output_quality',
      'prompt',
    ]);
    expect((await taskEntries(s, id)).charge).toBe(-4_000);
  });

  it("kie.ai: createTask gets the model id and kie.ai's input names as the page documents them", async () => {
    const { key } = await s.account(10);
    const id = await create(s, key, KIE_MODEL, { prompt: 'a red kite', image_size: '16:9' });
    const t = await settle(s, key, id);
    expect(t.state, JSON.stringify(t)).toBe('success');
    expect(kie.creates().at(-1)?.json).toEqual({ model: KIE_MODEL, input: { prompt: 'a red kite', output_format: 'png', image_size: '16:9' } });
    expect((await taskEntries(s, id)).charge).toBe(-30_000);
    await expectLedgerInvariant(s.services.database);
  });
});
