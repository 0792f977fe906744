import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatUsd } from '../../src/billing/index.js';
import { dialects } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { hashOf } from '../media/helpers.js';
import { startKieFake } from '../fakes/kie.js';
import { FAST, create, hashOfLink, resultUrls, settle, taskEntries } from '../tasks/support.js';
import { useUpstreamKit } from './helpers.js';

const scratch = mkdtempSync(path.join(tmpdir(), 'gengate-kie-market-'));

/**
 * A kie.ai market model (catalog/kie/, decision 3311) goes to kie.ai once the operator configures
 * it: here a catalog file gives the shipped route (kie.ai's id, the input as validated under kie.ai's
 * names) the fake kie.ai's address. The engine sends kie.ai's own body, polls recordInfo, re-hosts the
 * result and the task keeps the list price; a market model the file does not name stays on the demo.
 */
describe.each(dialects())('kie.ai market models routed to a kie.ai upstream on %s', (dialect) => {
  const kit = useUpstreamKit();
  let s: TestServer;
  let kie: Awaited<ReturnType<typeof startKieFake>>;

  beforeAll(async () => {
    kie = await startKieFake('kie-market-e2e');
    kie.media('image.jpg', kit.image, 'image/jpeg');
    kie.media('video.mp4', kit.video, 'video/mp4');
    const route = (model: string) => ({ backend: 'kie', model, as_is: true, base_url: kie.url, upload_url: kie.uploadUrl, key_env: 'MARKET_KIE_KEY' });
    const catalog = path.join(scratch, `catalog-${dialect}.json`);
    writeFileSync(
      catalog,
      JSON.stringify({
        models: {
          'wan/2-6-text-to-video': { routes: [route('wan/2-6-text-to-video'), { backend: 'local' }] },
          'nano-banana-2-lite': { routes: [route('nano-banana-2-lite')] },
        },
      }),
    );
    s = await startServer(dialect, {
      ...FAST,
      GENGATE_CATALOG: catalog,
      ALLOW_PRIVATE_NETWORK: 'true',
      UPSTREAM_POLL_MS: '20',
      MARKET_KIE_KEY: 'kie-market-e2e',
    });
    s.services.engine.start();
  });
  afterAll(async () => {
    await s?.close();
    await kie?.close();
  });

  it("wan/2-6-text-to-video: kie.ai's body goes to kie.ai as sent, the result is re-hosted, the list price charged", async () => {
    const { key } = await s.account(10);
    const id = await create(s, key, 'wan/2-6-text-to-video', { prompt: 'a paper boat', duration: 10, resolution: '1080p', multi_shots: false });
    expect(await taskEntries(s, id)).toEqual({ charge: -1_050_000 });
    const t = await settle(s, key, id);
    expect(t, JSON.stringify(t)).toMatchObject({ state: 'success', model: 'wan/2-6-text-to-video', costUsd: formatUsd(1_050_000, 3) });
    const sent = kie.creates().at(-1)!;
    expect(sent.path).toBe('/api/v1/jobs/createTask');
    // kie.ai's id and names; the duration as the text kie.ai documents ("10"), nothing of GenGate's own.
    expect(sent.json).toEqual({ model: 'wan/2-6-text-to-video', input: { prompt: 'a paper boat', duration: '10', resolution: '1080p', multi_shots: false } });
    const link = resultUrls(t)[0]!;
    expect(link).not.toContain(kie.url);
    expect(await hashOfLink(s, link)).toBe(await hashOf(kit.video));
  });

  it('nano-banana-2-lite: an image through kie.ai with its default resolution filled in', async () => {
    const { key } = await s.account(10);
    const id = await create(s, key, 'nano-banana-2-lite', { prompt: 'a lighthouse', aspect_ratio: '4:1' });
    const t = await settle(s, key, id);
    expect(t, JSON.stringify(t)).toMatchObject({ state: 'success', costUsd: formatUsd(25_000, 3) });
    expect(kie.creates().at(-1)!.json).toEqual({ model: 'nano-banana-2-lite', input: { prompt: 'a lighthouse', aspect_ratio: '4:1', resolution: '1K' } });
    expect(await hashOfLink(s, resultUrls(t)[0]!)).toBe(await hashOf(kit.image));
  });

  it('a market model the catalog file does not route stays on the local demo backend (no KIE_API_KEY)', async () => {
    const before = kie.creates().length;
    const { key } = await s.account(10);
    expect(s.services.catalog.find('wan/2-5-text-to-video')!.routes).toEqual([{ backend: 'local' }]);
    const t = await settle(s, key, await create(s, key, 'wan/2-5-text-to-video', { prompt: 'rain', duration: '5', resolution: '720p' }));
    expect(t).toMatchObject({ state: 'success', costUsd: formatUsd(300_000, 3) });
    expect(kie.creates().length).toBe(before);
  });
});

describe('KIE_API_KEY alone turns kie.ai on for the whole market (decision 3311)', () => {
  let s: TestServer;
  beforeAll(async () => {
    // The engine is not started: nothing is sent anywhere, the routes are only built.
    s = await startServer('sqlite', { ...FAST, KIE_API_KEY: 'kie-key-of-the-operator' });
  });
  afterAll(() => s?.close());

  it("every market model's first route is kie.ai under its own id, with an upstream built for it; built-in models are unchanged", () => {
    const market = s.services.catalog.models.filter((m) => m.source?.includes('/catalog/kie/'));
    expect(market).toHaveLength(28);
    for (const m of market) {
      expect(m.routes, m.id).toEqual([{ backend: 'kie', model: m.id, keyEnv: 'KIE_API_KEY', asIs: true, optional: true }, { backend: 'local' }]);
    }
    const routes = s.services.routeHealth.details(s.services.fileCatalog);
    expect(routes.map((r) => r.model).sort()).toEqual(market.map((m) => m.id).sort());
    expect(new Set(routes.map((r) => r.backend))).toEqual(new Set(['kie']));
    expect(s.services.catalog.find('wan-2.7')!.routes).toEqual([{ backend: 'local' }]);
  });
});
