import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { hashOf } from '../media/helpers.js';
import { startKieFake } from '../fakes/kie.js';
import { upload } from '../files/support.js';
import { FAST, MovableClock, create, eventually, expectLedgerInvariant, hashOfLink, info, resultUrls, settle, taskEntries } from '../tasks/support.js';
import { useUpstreamKit } from './helpers.js';
import { expectMoneyInvariant } from '../billing/money-checks.js';

const scratch = mkdtempSync(path.join(tmpdir(), 'gengate-kie-'));
type Fake = Awaited<ReturnType<typeof startKieFake>>;

function serveMedia(fake: Fake, kit: ReturnType<typeof useUpstreamKit>): void {
  fake.media('image.jpg', kit.image, 'image/jpeg');
  fake.media('video.mp4', kit.video, 'video/mp4');
  fake.media('track-1.mp3', kit.tracks[0]!, 'audio/mpeg');
  fake.media('track-2.mp3', kit.tracks[1]!, 'audio/mpeg');
}

/**
 * kie.ai as an upstream through the whole engine (DECISIONS §19): a catalog file routes models to
 * a fake kie.ai; the engine submits with kie.ai's names, follows by polling, re-hosts the results,
 * fails over, skips a route whose kie.ai credit is below its min_credit, and never submits twice
 * after a create whose answer was lost.
 */
describe.each(dialects())('kie routes end to end on %s', (dialect) => {
  const kit = useUpstreamKit();
  let s: TestServer;
  let kie: Fake;
  let poor: Fake;

  beforeAll(async () => {
    kie = await startKieFake('kie-e2e');
    serveMedia(kie, kit);
    poor = await startKieFake('kie-poor');
    poor.setCredit(5);
    const route = { backend: 'kie', base_url: kie.url, upload_url: kie.uploadUrl, key_env: 'E2E_KIE_KEY' };
    const lowRoute = { backend: 'kie', base_url: poor.url, upload_url: poor.uploadUrl, key_env: 'E2E_KIE_POOR_KEY', min_credit: 100 };
    const catalog = path.join(scratch, `catalog-${dialect}.json`);
    writeFileSync(
      catalog,
      JSON.stringify({
        models: {
          'google/nano-banana-edit': { routes: [route] },
          'nano-banana-2': { routes: [route] },
          'nano-banana-pro': { routes: [route, { backend: 'local' }] },
          'seedream-pro': { routes: [route, { backend: 'local' }] },
          'suno-v6': { routes: [route] },
          'grok-imagine': { routes: [lowRoute] },
          'wan-2.7': { routes: [{ ...lowRoute, name: 'kie-poor-wan' }, { backend: 'local' }] },
        },
      }),
    );
    s = await startServer(dialect, {
      ...FAST,
      GENGATE_CATALOG: catalog,
      ALLOW_PRIVATE_NETWORK: 'true',
      UPSTREAM_POLL_MS: '20',
      ENGINE_MAX_ATTEMPTS: '2',
      E2E_KIE_KEY: 'kie-e2e',
      E2E_KIE_POOR_KEY: 'kie-poor',
      ADMIN_TOKEN: 'admin-token-kie-e2e',
    });
    s.services.engine.start();
  });
  afterAll(async () => {
    await s?.close();
    await Promise.all([kie?.close(), poor?.close()]);
  });

  it("sends an uploaded photo through kie.ai's upload host, polls recordInfo and re-hosts the result under a GenGate link", async () => {
    const { key } = await s.account(10);
    const up = await upload(s, key, kit.frame, 'frame.png');
    expect(up.status, JSON.stringify(up.body)).toBe(200);
    const id = await create(s, key, 'google/nano-banana-edit', { prompt: 'a hat on it', image_input: [up.body.data.url], aspect_ratio: '1:1' });
    const t = await settle(s, key, id);
    expect(t.state, JSON.stringify(t)).toBe('success');
    const body = kie.creates().at(-1)!.json as { model: string; input: Record<string, unknown> };
    expect(body.model).toBe('google/nano-banana-edit');
    expect(body).not.toHaveProperty('callBackUrl');
    expect(body.input).toMatchObject({ prompt: 'a hat on it', image_size: '1:1', image_urls: [kie.uploads.at(-1)!.url] });
    expect(kie.uploads.at(-1)).toMatchObject({ fileName: 'frame.png', uploadPath: 'gengate' });
    expect(kie.calls.some((c) => c.path === '/api/v1/jobs/recordInfo')).toBe(true);
    const link = resultUrls(t)[0]!;
    expect(link).not.toContain(kie.url);
    expect(await hashOfLink(s, link)).toBe(await hashOf(kit.image));
  });

  it('passes a kie.ai field GenGate ignores to kie.ai unchanged when the client sent it under a kie.ai id', async () => {
    const { key } = await s.account(10);
    const id = await create(s, key, 'nano-banana-2', { prompt: 'a map', google_search: true, nsfw_checker: false });
    expect((await settle(s, key, id)).state).toBe('success');
    expect((kie.creates().at(-1)!.json as { input: Record<string, unknown> }).input).toMatchObject({
      prompt: 'a map',
      google_search: true,
      nsfw_checker: false,
    });
  });

  it("runs suno-v6 through kie.ai's Suno endpoints and re-hosts both tracks", async () => {
    const { key } = await s.account(10);
    const id = await create(s, key, 'suno-v6', { prompt: 'rain, rain', custom_mode: true, title: 'Rain', style: 'folk', version: 'v5' });
    const t = await settle(s, key, id);
    expect(t.state, JSON.stringify(t)).toBe('success');
    expect(kie.creates().at(-1)!.path).toBe('/api/v1/generate');
    expect(kie.creates().at(-1)!.json).toMatchObject({ prompt: 'rain, rain', model: 'V5', customMode: true, title: 'Rain' });
    // Issue 36: kie.ai's Suno API refuses a request without callBackUrl, so one is sent with UPSTREAM_WEBHOOKS off too
    // (the task's notify address; the engine still polls: this fake never calls back).
    expect(String((kie.creates().at(-1)!.json as { callBackUrl?: string }).callBackUrl)).toMatch(/^https?:\/\/[^/]+\/upstream\/v1\/notify\/[A-Za-z0-9_-]+$/);
    expect(kie.calls.filter((c) => c.path === '/api/v1/generate/record-info').length).toBeGreaterThan(1);
    const links = resultUrls(t);
    expect(links).toHaveLength(2);
    expect(await hashOfLink(s, links[1]!)).toBe(await hashOf(kit.tracks[1]!));
  });

  it("refuses with 422 before any charge an input kie.ai's Suno API refuses (issue 36 item 4): a long prompt without custom mode, no style in custom mode", async () => {
    const { key } = await s.account(10);
    const before = kie.creates().length;
    const balance = async () => (await s.call('GET', '/api/v1/user/balance', { key })).body.data.balance;
    const was = await balance();
    const long = await s.call('POST', '/api/v1/jobs/createTask', { key, body: { model: 'suno-v6', input: { prompt: 'la '.repeat(600) } } });
    expect(long.status, JSON.stringify(long.body)).toBe(422);
    expect(long.body.msg).toBe(
      "input.prompt may be at most 500 characters when input.custom_mode is false: kie.ai's Suno API that suno-v6 runs on takes no more (got 1800)",
    );
    const noStyle = await s.call('POST', '/api/v1/jobs/createTask', {
      key,
      body: { model: 'suno-v6', input: { prompt: 'la', custom_mode: true, title: 'T' } },
    });
    expect(noStyle.status).toBe(422);
    expect(noStyle.body.msg).toContain('input.style is required when input.custom_mode is true');
    expect(await balance()).toBe(was);
    expect(kie.creates().length).toBe(before);
  });

  it('fails over from kie.ai in maintenance (455) to the next route after the retries', async () => {
    const { key } = await s.account(10);
    const before = kie.creates().length;
    const id = await create(s, key, 'seedream-pro', { prompt: '[down] a lighthouse' });
    const t = await settle(s, key, id);
    expect(t.state, JSON.stringify(t)).toBe('success');
    expect(kie.creates().length - before).toBe(2);
    const row = await s.services.database.db.selectFrom('tasks').select(['backend']).where('id', '=', id).executeTakeFirstOrThrow();
    expect(row.backend).toBe('local');
  });

  it('maps a kie.ai task failed by its content policy to 400 and refunds it exactly once', async () => {
    const { key } = await s.account(10);
    const id = await create(s, key, 'nano-banana-pro', { prompt: '[policy] a storm' });
    const t = await settle(s, key, id);
    expect(t).toMatchObject({ state: 'fail', failCode: 400, refunded: true, creditsConsumed: 0 });
    const entries = await taskEntries(s, id);
    expect(entries.refund).toBe(-entries.charge!);
    await expectLedgerInvariant(s.services.database);
  });

  it('a lost create answer fails the task with 503, refunds it, and never submits it again (not here, not on the next route)', async () => {
    const { key } = await s.account(10);
    const before = kie.creates().length;
    const id = await create(s, key, 'nano-banana-pro', { prompt: '[lost] a kite' });
    const t = await settle(s, key, id);
    expect(t).toMatchObject({ state: 'fail', failCode: 503, refunded: true });
    expect(t.failMsg).toContain('not repeated');
    expect(kie.creates().length - before).toBe(1);
    const row = await s.services.database.db.selectFrom('tasks').select(['backend']).where('id', '=', id).executeTakeFirstOrThrow();
    expect(row.backend).toMatch(/^kie:/);
    const entries = await taskEntries(s, id);
    expect(entries.refund).toBe(-entries.charge!);
    await expectLedgerInvariant(s.services.database);
  });

  it('skips a route whose kie.ai credit is below min_credit: alone the task fails 503 refunded, with a next route it renders there', async () => {
    const { key } = await s.account(10);
    const alone = await create(s, key, 'grok-imagine', { prompt: 'a fox', duration: 6, resolution: '480p' });
    const t = await settle(s, key, alone);
    expect(t).toMatchObject({ state: 'fail', failCode: 503, refunded: true });
    expect(t.failMsg).toContain("kie.ai credit 5 is below the route's min_credit 100");
    const next = await create(s, key, 'wan-2.7', { prompt: 'a fox', duration: 5, resolution: '480p' });
    expect((await settle(s, key, next)).state).toBe('success');
    expect(poor.creates()).toHaveLength(0);
    await expectLedgerInvariant(s.services.database);

    const models = await s.call('GET', '/api/v1/models');
    const grok = (models.body.data as { id: string; routes: unknown[] }[]).find((m) => m.id === 'grok-imagine')!;
    expect(grok.routes).toEqual([{ backend: 'kie', state: 'closed', credit: 'low' }]);
    const edit = (models.body.data as { id: string; routes: unknown[] }[]).find((m) => m.id === 'google/nano-banana-edit')!;
    expect(edit.routes).toEqual([{ backend: 'kie', state: 'closed', credit: 'ok' }]);
    const admin = await s.call('GET', '/admin/v1/routes', { headers: { authorization: 'Bearer admin-token-kie-e2e' } });
    expect(admin.status).toBe(200);
    expect((admin.body.data as { route: string }[]).find((r) => r.route === 'kie-poor-wan')).toMatchObject({
      model: 'wan-2.7',
      backend: 'kie',
      account: { credit: 5, minCredit: 100, low: true },
    });
    const metrics = await (await fetch(`${s.url}/metrics`)).text();
    expect(metrics).toContain('gengate_route_credit_low{route="kie-poor-wan",model="wan-2.7",backend="kie"} 1');
    expect(metrics).toContain('gengate_route_upstream_credit{route="kie-poor-wan",model="wan-2.7",backend="kie"} 5');
  });

  it('money: after every failure, cancel and success above, the balances, key spend, usage and the money report agree', async () => {
    await eventually(
      async () =>
        (await s.services.database.db.selectFrom('tasks').select('id').where('state', 'in', ['waiting', 'queuing', 'generating']).execute()).length === 0,
    );
    await expectMoneyInvariant(s);
  });
});

/** kie.ai has no cancel: a client's cancel of a handed task is refused, and the 20-minute limit fails it (refunded once) while kie.ai runs on. */
describe.each(dialects())('kie tasks at the 20-minute limit on %s', (dialect) => {
  const clock = new MovableClock();
  let s: TestServer;
  let kie: Fake;
  beforeAll(async () => {
    kie = await startKieFake('kie-slow', { finishAfterMs: 3_600_000 });
    const catalog = path.join(scratch, `catalog-slow-${dialect}.json`);
    writeFileSync(catalog, JSON.stringify({ models: { 'nano-banana-pro': { routes: [{ backend: 'kie', base_url: kie.url, key_env: 'SLOW_KIE_KEY' }] } } }));
    s = await startServer(
      dialect,
      { ...FAST, GENGATE_CATALOG: catalog, ALLOW_PRIVATE_NETWORK: 'true', UPSTREAM_POLL_MS: '20', SLOW_KIE_KEY: 'kie-slow' },
      undefined,
      { clock },
    );
    s.services.engine.start();
  });
  afterAll(async () => {
    await s?.close();
    await kie?.close();
  });

  it('a cancel answers 409 (kie.ai cannot cancel) and the task runs on; at the limit it fails 504 and is refunded exactly once', async () => {
    const { key } = await s.account(10);
    const id = await create(s, key, 'nano-banana-pro', { prompt: 'a very slow one' });
    await eventually(async () => (await info(s, key, id)).state === 'queuing');
    const cancel = await s.call('POST', '/api/v1/jobs/cancel', { key, body: { taskId: id } });
    expect(cancel.status, JSON.stringify(cancel.body)).toBe(409);
    expect(cancel.body.msg).toContain('cannot cancel');
    expect((await info(s, key, id)).state).toBe('queuing');
    clock.advance(21 * 60_000);
    const t = await settle(s, key, id);
    expect(t).toMatchObject({ state: 'fail', failCode: 504, refunded: true });
    expect(kie.creates()).toHaveLength(1);
    const entries = await taskEntries(s, id);
    expect(entries.refund).toBe(-entries.charge!);
    await expectLedgerInvariant(s.services.database);
  });

  it('money: the refused cancel and the timeout leave the balances, key spend, usage and the money report in agreement', async () => {
    await expectMoneyInvariant(s);
  });
});

/** Webhook mode: with polling pushed out of the way, only kie.ai's callback to the notify address can end the task. */
describe('kie callbacks end tasks (sqlite)', () => {
  const kit = useUpstreamKit();
  let s: TestServer;
  let kie: Fake;
  beforeAll(async () => {
    kie = await startKieFake('kie-hook', { finishAfterMs: 300, webhookAddress: (url) => url.replace('http://gengate.test', s.url) });
    serveMedia(kie, kit);
    const catalog = path.join(scratch, 'catalog-hook.json');
    writeFileSync(catalog, JSON.stringify({ models: { 'nano-banana-pro': { routes: [{ backend: 'kie', base_url: kie.url, key_env: 'HOOK_KIE_KEY' }] } } }));
    s = await startServer('sqlite', {
      ...FAST,
      GENGATE_CATALOG: catalog,
      ALLOW_PRIVATE_NETWORK: 'true',
      UPSTREAM_POLL_MS: '600000',
      HOOK_KIE_KEY: 'kie-hook',
      UPSTREAM_WEBHOOKS: 'true',
      PUBLIC_BASE_URL: 'http://gengate.test',
    });
    s.services.engine.start();
  });
  afterAll(async () => {
    await s?.close();
    await kie?.close();
  });

  it('creates with callBackUrl = the notify address; the callback wakes the task, which reads recordInfo and re-hosts', async () => {
    const { key } = await s.account(10);
    const id = await create(s, key, 'nano-banana-pro', { prompt: 'a quiet harbour' });
    const t = await settle(s, key, id);
    expect(t.state, JSON.stringify(t)).toBe('success');
    expect(String((kie.creates()[0]!.json as { callBackUrl?: string }).callBackUrl)).toMatch(/^http:\/\/gengate\.test\/upstream\/v1\/notify\/[A-Za-z0-9_-]+$/);
    expect(kie.deliveries).toHaveLength(1);
    expect(kie.deliveries[0]!.status).toBe(200);
  });
});
