import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { hashOf } from '../media/helpers.js';
import { startBytePlusFake } from '../fakes/byteplus.js';
import { startFalFake } from '../fakes/fal.js';
import { startReplicateFake } from '../fakes/replicate.js';
import { FAST, create, expectLedgerInvariant, hashOfLink, settle, taskEntries } from '../tasks/support.js';
import { useUpstreamKit } from './helpers.js';

const scratch = mkdtempSync(path.join(tmpdir(), 'gengate-providers-'));

/**
 * The whole path through GenGate for each provider adapter: a catalog file routes models to the
 * fake providers, the engine submits, polls, downloads the results through the guard and re-hosts
 * them, and failures refund the client.
 */
describe.each(dialects())('provider routes end to end on %s', (dialect) => {
  const kit = useUpstreamKit();
  let s: TestServer;
  let byteplus: Awaited<ReturnType<typeof startBytePlusFake>>;
  let fal: Awaited<ReturnType<typeof startFalFake>>;
  let replicate: Awaited<ReturnType<typeof startReplicateFake>>;

  beforeAll(async () => {
    byteplus = await startBytePlusFake('ark-e2e', { video: 'video.mp4', frame: 'frame.png', image: 'image.jpg' });
    byteplus.media('video.mp4', kit.video, 'video/mp4');
    byteplus.media('frame.png', kit.frame, 'image/png');
    fal = await startFalFake('fal-e2e', (_model, base) => ({ images: [{ url: `${base}/media/image.jpg`, content_type: 'image/jpeg' }] }));
    fal.media('image.jpg', kit.image, 'image/jpeg');
    replicate = await startReplicateFake('r8_e2e', (_model, base) => `${base}/media/video.mp4`);
    replicate.media('video.mp4', kit.video, 'video/mp4');
    const catalog = path.join(scratch, `catalog-${dialect}.json`);
    writeFileSync(
      catalog,
      JSON.stringify({
        models: {
          'seedance-1.5-pro': { routes: [{ backend: 'byteplus', model: 'seedance-1-5-pro-251215', base_url: byteplus.url, key_env: 'E2E_ARK_KEY' }] },
          'google/nano-banana': { routes: [{ backend: 'fal', model: 'fal-ai/nano-banana', base_url: fal.url, key_env: 'E2E_FAL_KEY' }, { backend: 'local' }] },
          'wan-2.7': { routes: [{ backend: 'replicate', model: 'wan-video/wan-2.7', base_url: replicate.url, key_env: 'E2E_REPLICATE_TOKEN' }] },
        },
      }),
    );
    s = await startServer(dialect, {
      ...FAST,
      GENGATE_CATALOG: catalog,
      ALLOW_PRIVATE_NETWORK: 'true',
      UPSTREAM_POLL_MS: '20',
      // The notices cannot reach gengate.test: the polls after the first one must not wait for the 60 s safety net.
      UPSTREAM_FALLBACK_POLL_MS: '20',
      ENGINE_MAX_ATTEMPTS: '2',
      E2E_ARK_KEY: 'ark-e2e',
      E2E_FAL_KEY: 'fal-e2e',
      E2E_REPLICATE_TOKEN: 'r8_e2e',
      UPSTREAM_WEBHOOKS: 'true',
      PUBLIC_BASE_URL: 'http://gengate.test',
    });
    s.services.engine.start();
  });
  afterAll(async () => {
    await s?.close();
    await Promise.all([byteplus?.close(), fal?.close(), replicate?.close()]);
  });

  it('BytePlus: a Seedance task is created with the notify address, followed, and its video re-hosted with its real length', async () => {
    const { key } = await s.account(10);
    const id = await create(s, key, 'seedance-1.5-pro', { prompt: 'a paper boat', duration: 4, resolution: '480p' });
    const t = await settle(s, key, id);
    expect(t.state, JSON.stringify(t)).toBe('success');
    const sent = byteplus.calls.find((c) => c.method === 'POST')!.json as Record<string, unknown>;
    expect(sent).toMatchObject({ model: 'seedance-1-5-pro-251215', resolution: '480p', duration: 4 });
    expect(String(sent.callback_url)).toMatch(/^http:\/\/gengate\.test\/upstream\/v1\/notify\/[A-Za-z0-9_-]+$/);
    expect(t.resultJson.videos[0].url).not.toContain(byteplus.url);
    expect(await hashOfLink(s, t.resultJson.videos[0].url)).toBe(await hashOf(kit.video));
    expect(t.resultJson.duration).toBeCloseTo(2, 0);
  });

  it('fal: a busy queue is retried on the route and then the local route renders; a normal request is re-hosted', async () => {
    const { key } = await s.account(10);
    const ok = await create(s, key, 'google/nano-banana', { prompt: 'a teapot' });
    const t = await settle(s, key, ok);
    expect(t.state, JSON.stringify(t)).toBe('success');
    const link = (typeof t.resultJson === 'string' ? JSON.parse(t.resultJson) : t.resultJson).resultUrls[0] as string;
    expect(await hashOfLink(s, link)).toBe(await hashOf(kit.image));

    const before = fal.calls.filter((c) => c.method === 'POST').length;
    const busy = await create(s, key, 'google/nano-banana', { prompt: '[busy] a teapot' });
    const b = await settle(s, key, busy);
    expect(b.state, JSON.stringify(b)).toBe('success');
    expect(fal.calls.filter((c) => c.method === 'POST').length - before).toBe(2);
  });

  it('Replicate: a prediction flagged after acceptance fails with 400 and the client is refunded in full', async () => {
    const { key } = await s.account(10);
    const id = await create(s, key, 'wan-2.7', { prompt: '[policy] a storm', duration: 5, resolution: '480p' });
    const t = await settle(s, key, id);
    expect(t).toMatchObject({ state: 'fail', failCode: 400, refunded: true, creditsConsumed: 0 });
    const entries = await taskEntries(s, id);
    expect(entries.charge).toBeLessThan(0);
    expect(entries.refund).toBe(-entries.charge!);
    await expectLedgerInvariant(s.services.database);
  });
});

/** Providers finishing on their own clock: with polling pushed out of the way, only their webhooks can end the tasks. */
describe('provider webhooks end tasks (sqlite)', () => {
  const kit = useUpstreamKit();
  let s: TestServer;
  let byteplus: Awaited<ReturnType<typeof startBytePlusFake>>;
  let fal: Awaited<ReturnType<typeof startFalFake>>;
  let replicate: Awaited<ReturnType<typeof startReplicateFake>>;
  const toServer = (url: string) => url.replace('http://gengate.test', s.url);
  beforeAll(async () => {
    byteplus = await startBytePlusFake(
      'ark-hook',
      { video: 'video.mp4', frame: 'frame.png', image: 'image.jpg' },
      { finishAfterMs: 300, callbackAddress: toServer },
    );
    byteplus.media('video.mp4', kit.video, 'video/mp4');
    fal = await startFalFake('fal-hook', (_model, base) => ({ images: [{ url: `${base}/media/image.jpg`, content_type: 'image/jpeg' }] }), {
      finishAfterMs: 300,
      webhookAddress: toServer,
    });
    fal.media('image.jpg', kit.image, 'image/jpeg');
    replicate = await startReplicateFake('r8_hook', (_model, base) => `${base}/media/video.mp4`, { finishAfterMs: 300, webhookAddress: toServer });
    replicate.media('video.mp4', kit.video, 'video/mp4');
    const catalog = path.join(scratch, 'catalog-hook.json');
    writeFileSync(
      catalog,
      JSON.stringify({
        models: {
          'seedance-1.5-pro': { routes: [{ backend: 'byteplus', model: 'seedance-1-5-pro-251215', base_url: byteplus.url, key_env: 'HOOK_ARK_KEY' }] },
          'google/nano-banana': { routes: [{ backend: 'fal', model: 'fal-ai/nano-banana', base_url: fal.url, key_env: 'HOOK_FAL_KEY' }] },
          'wan-2.7': { routes: [{ backend: 'replicate', model: 'wan-video/wan-2.7', base_url: replicate.url, key_env: 'HOOK_REPLICATE_TOKEN' }] },
        },
      }),
    );
    s = await startServer('sqlite', {
      ...FAST,
      GENGATE_CATALOG: catalog,
      ALLOW_PRIVATE_NETWORK: 'true',
      UPSTREAM_POLL_MS: '600000',
      HOOK_ARK_KEY: 'ark-hook',
      HOOK_FAL_KEY: 'fal-hook',
      HOOK_REPLICATE_TOKEN: 'r8_hook',
      UPSTREAM_WEBHOOKS: 'true',
      PUBLIC_BASE_URL: 'http://gengate.test',
    });
    s.services.engine.start();
  });
  afterAll(async () => {
    await s?.close();
    await Promise.all([byteplus?.close(), fal?.close(), replicate?.close()]);
  });

  const NOTIFY = /^http:\/\/gengate\.test\/upstream\/v1\/notify\/[A-Za-z0-9_-]+$/;
  const cases = [
    {
      provider: 'BytePlus callback_url',
      model: 'seedance-1.5-pro',
      input: { prompt: 'a quiet harbour', duration: 4, resolution: '480p' },
      fake: () => byteplus,
      given: () => (byteplus.calls.find((c) => c.method === 'POST')!.json as Record<string, unknown>).callback_url,
    },
    {
      provider: 'fal fal_webhook',
      model: 'google/nano-banana',
      input: { prompt: 'a quiet harbour' },
      fake: () => fal,
      given: () => fal.calls.find((c) => c.method === 'POST')!.query.get('fal_webhook'),
    },
    {
      provider: 'Replicate webhook',
      model: 'wan-2.7',
      input: { prompt: 'a quiet harbour', duration: 5, resolution: '480p' },
      fake: () => replicate,
      given: () => (replicate.calls.find((c) => c.method === 'POST')!.json as Record<string, unknown>).webhook,
    },
  ];

  it.each(cases)('$provider: the completion notice wakes the task, which then reads the upstream and re-hosts the result', async (c) => {
    const { key } = await s.account(10);
    const id = await create(s, key, c.model, c.input);
    const t = await settle(s, key, id);
    expect(t.state, JSON.stringify(t)).toBe('success');
    expect(String(c.given())).toMatch(NOTIFY);
    const deliveries = c.fake().deliveries;
    expect(deliveries).toHaveLength(1);
    expect(deliveries[0]!.status).toBeGreaterThanOrEqual(200);
    expect(deliveries[0]!.status).toBeLessThan(300);
  });
});
