import type { ChildProcess } from 'node:child_process';
import { openAsBlob, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MICROS_PER_USD } from '../../src/billing/index.js';
import { loadConfig } from '../../src/config.js';
import { probe } from '../../src/media/index.js';
import { buildServices } from '../../src/services.js';
import { spawnServe, stop } from '../helpers/cli.js';
import { createTestDb, dialects, type TestDb } from '../helpers/db.js';
import { freePort } from '../helpers/server.js';
import { makeClip, useTmpDir } from '../media/helpers.js';
import { eventually, expectLedgerInvariant } from '../tasks/support.js';

/** Creates an account on a GenGate database (before its server starts) and returns its API key. */
async function account(env: Record<string, string>, usd: number): Promise<string> {
  const services = await buildServices(loadConfig(env));
  try {
    return (await services.accounts.create('e2e', usd * MICROS_PER_USD)).apiKey;
  } finally {
    await services.close();
  }
}

async function call(url: string, key: string, method: string, p: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(url + p, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, body: (await res.json()) as any };
}

async function settle(url: string, key: string, taskId: string, limitMs = 60_000): Promise<any> {
  let state = 'unknown';
  return eventually(
    async () => {
      const t = (await call(url, key, 'GET', `/api/v1/jobs/recordInfo?taskId=${taskId}`)).body.data;
      state = t.state;
      return t.state === 'success' || t.state === 'fail' ? t : null;
    },
    limitMs,
    () => `task ${taskId} to be final; it is still ${state}`,
  );
}

const balance = async (url: string, key: string) => (await call(url, key, 'GET', '/api/v1/user/balance')).body.data.balance as string;
const usd = (s: string) => Math.round(Number(s) * 1000);

/**
 * Issue 8 end to end: GenGate A routes models to GenGate B (a second real `gengate serve`
 * process) through the same-API adapter; B's local backend renders. Uploads, createTask with an
 * Idempotency-Key, polling, B's callback to A's notify address, results re-hosted on A, prices and
 * refunds on both sides.
 */
describe.each(dialects())('one GenGate routed to another over %s', (dialect) => {
  const tmp = useTmpDir();
  const children: ChildProcess[] = [];
  let dbA: TestDb;
  let dbB: TestDb;
  let envA: Record<string, string>;
  let urlB = '';
  let keyA = '';
  let keyB = '';

  async function serveA(extra: Record<string, string>): Promise<{ child: ChildProcess; url: string }> {
    const p = await spawnServe({ ...envA, ...extra });
    children.push(p.child);
    return p;
  }

  beforeAll(async () => {
    dbA = await createTestDb(dialect);
    dbB = await createTestDb(dialect);
    const portB = await freePort();
    urlB = `http://127.0.0.1:${portB}`;
    const envB = {
      DATA_DIR: dbB.dir,
      DATABASE_URL: dbB.url,
      PORT: String(portB),
      PUBLIC_BASE_URL: urlB,
      FIRST_RUN_ACCOUNT: 'false',
      ALLOW_PRIVATE_NETWORK: 'true',
      ENGINE_POLL_MS: '50',
      LOCAL_QUEUE_MS: '200',
      LOCAL_GENERATE_MS: '300',
      CALLBACK_RETRY_DELAYS_MS: '200,500',
    };
    keyB = await account(envB, 10);
    const b = await spawnServe(envB);
    children.push(b.child);
    const catalog = path.join(dbA.dir, 'catalog.json');
    const route = [{ backend: 'same-api', base_url: urlB, key_env: 'B_GENGATE_KEY' }];
    writeFileSync(catalog, JSON.stringify({ models: { 'nano-banana-2': { routes: route }, 'seedance-2.0': { routes: route } } }));
    envA = {
      DATA_DIR: dbA.dir,
      DATABASE_URL: dbA.url,
      FIRST_RUN_ACCOUNT: 'false',
      GENGATE_CATALOG: catalog,
      B_GENGATE_KEY: keyB,
      ALLOW_PRIVATE_NETWORK: 'true',
      ENGINE_POLL_MS: '50',
    };
    keyA = await account(envA, 10);
  }, 240_000);

  afterAll(async () => {
    for (const c of children.splice(0)) await stop(c, 'SIGKILL');
    await dbA?.drop();
    await dbB?.drop();
  });

  it('polling: an image and a video with an uploaded clip render on B, are re-hosted on A and priced on both sides', async () => {
    const portA = await freePort();
    const a = await serveA({ PORT: String(portA), PUBLIC_BASE_URL: `http://127.0.0.1:${portA}`, UPSTREAM_WEBHOOKS: 'false', UPSTREAM_POLL_MS: '100' });
    const startA = usd(await balance(a.url, keyA));
    const startB = usd(await balance(urlB, keyB));

    const image = (await call(a.url, keyA, 'POST', '/api/v1/jobs/createTask', { model: 'nano-banana-2', input: { prompt: 'a lighthouse' } })).body.data.taskId;
    const form = new FormData();
    form.append('file', await openAsBlob(await makeClip(tmp('clip.mp4'), { seconds: 4 })), 'clip.mp4');
    const up = (await (
      await fetch(`${a.url}/api/v1/files/upload`, { method: 'POST', body: form, headers: { authorization: `Bearer ${keyA}` } })
    ).json()) as any;
    expect(up.data.url.startsWith(a.url)).toBe(true);
    const video = (
      await call(a.url, keyA, 'POST', '/api/v1/jobs/createTask', {
        model: 'seedance-2.0',
        input: { prompt: 'waves', video_urls: [up.data.url], video_mode: 'edit', resolution: '480p', return_last_frame: true },
      })
    ).body.data.taskId;

    const img = await settle(a.url, keyA, image);
    expect(img.state).toBe('success');
    const imgUrl = JSON.parse(img.resultJson).resultUrls[0] as string;
    expect(imgUrl.startsWith(a.url)).toBe(true);
    const imgRes = await fetch(imgUrl);
    expect(imgRes.headers.get('content-type')).toMatch(/^image\//);

    const vid = await settle(a.url, keyA, video);
    expect(vid.state).toBe('success');
    expect(vid.resultJson.videos[0].url.startsWith(a.url)).toBe(true);
    expect(vid.resultJson.duration).toBeCloseTo(4, 0);
    expect(vid.lastFrameUrl.startsWith(a.url)).toBe(true);
    const file = tmp('copied.mp4');
    writeFileSync(file, Buffer.from(await (await fetch(vid.resultJson.videos[0].url)).arrayBuffer()));
    expect((await probe(file)).durationSeconds).toBeCloseTo(4, 0);

    // B saw our uploads as its own files and one task per A task, each charged there at the same list price.
    const onB = (await call(urlB, keyB, 'GET', '/api/v1/jobs/list?limit=10')).body.data.items as any[];
    expect(onB).toHaveLength(2);
    const bVideo = onB.find((t) => t.model === 'seedance-2.0');
    expect(JSON.parse(bVideo.param).input.video_urls[0].startsWith(urlB)).toBe(true);
    expect(bVideo.costUsd).toBe(vid.costUsd);
    expect(onB.find((t) => t.model === 'nano-banana-2').costUsd).toBe(img.costUsd);
    const spent = usd(img.costUsd) + usd(vid.costUsd);
    expect(usd(await balance(a.url, keyA))).toBe(startA - spent);
    expect(usd(await balance(urlB, keyB))).toBe(startB - spent);
    await stop(a.child);
  }, 240_000);

  it('a failure on B is refunded on B and on A, with the failCode carried over', async () => {
    const portA = await freePort();
    const a = await serveA({ PORT: String(portA), PUBLIC_BASE_URL: `http://127.0.0.1:${portA}`, UPSTREAM_POLL_MS: '100' });
    const startA = await balance(a.url, keyA);
    const startB = await balance(urlB, keyB);
    const id = (await call(a.url, keyA, 'POST', '/api/v1/jobs/createTask', { model: 'nano-banana-2', input: { prompt: 'a storm gengate:fail=501' } })).body.data
      .taskId;
    const t = await settle(a.url, keyA, id);
    expect(t).toMatchObject({ state: 'fail', failCode: 501, refunded: true, creditsConsumed: 0, error: { type: 'server_error' } });
    expect(t.failMsg).toMatch(/^upstream: /);
    const onB = (await call(urlB, keyB, 'GET', '/api/v1/jobs/list?limit=1')).body.data.items[0];
    expect(onB).toMatchObject({ state: 'fail', failCode: 501, refunded: true });
    expect(await balance(a.url, keyA)).toBe(startA);
    expect(await balance(urlB, keyB)).toBe(startB);
    await stop(a.child);
  }, 240_000);

  it("callback: B's completion notice wakes the task on A long before A would poll", async () => {
    const portA = await freePort();
    // Polling every 10 minutes: only the callback can finish the task within the test.
    const a = await serveA({ PORT: String(portA), PUBLIC_BASE_URL: `http://127.0.0.1:${portA}`, UPSTREAM_WEBHOOKS: 'true', UPSTREAM_POLL_MS: '600000' });
    const id = (await call(a.url, keyA, 'POST', '/api/v1/jobs/createTask', { model: 'nano-banana-2', input: { prompt: 'a heron' } })).body.data.taskId;
    const t = await settle(a.url, keyA, id, 30_000);
    expect(t.state).toBe('success');
    const onB = (await call(urlB, keyB, 'GET', '/api/v1/jobs/list?limit=1')).body.data.items[0];
    expect(onB.callback).toMatchObject({ status: 'delivered' });
    // The notify address is unguessable and answers nothing about the task to anyone else.
    const wrong = await fetch(`${a.url}/upstream/v1/notify/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA`, {
      method: 'POST',
      body: '{}',
      headers: { 'content-type': 'application/json' },
    });
    expect(wrong.status).toBe(404);
    await stop(a.child);
    const services = await buildServices(loadConfig(envA));
    try {
      await expectLedgerInvariant(services.database);
      const row = await services.database.db.selectFrom('tasks').select(['upstream_token', 'backend']).where('id', '=', id).executeTakeFirstOrThrow();
      expect(row.backend).toBe('same-api:nano-banana-2#1');
      expect(onB.param).toContain(`/upstream/v1/notify/${row.upstream_token}`);
    } finally {
      await services.close();
    }
  }, 240_000);
});
