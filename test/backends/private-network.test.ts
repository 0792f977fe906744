import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderImage } from '../../src/backends/local/render.js';
import { loadConfig, ConfigError } from '../../src/config.js';
import { dialects } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { startFakeUpstream, type FakeUpstream } from '../tasks/fake-upstream.js';
import { FAST, create, settle } from '../tasks/support.js';

const scratch = mkdtempSync(path.join(tmpdir(), 'gengate-private-'));

/**
 * Issue 36 item 3, decision 2502: with ALLOW_PRIVATE_NETWORK off, an upstream on a loopback or
 * private address is reached when its route says `private_network: true` or its host is in
 * UPSTREAM_PRIVATE_HOSTS; any other private upstream, and every customer's callBackUrl, stays refused.
 */
describe.each(dialects())('trusted upstream hosts on %s', (dialect) => {
  let s: TestServer;
  let fake: FakeUpstream;
  beforeAll(async () => {
    const png = path.join(scratch, 'r.png');
    await renderImage({ format: 'png', prompt: 'private upstream' }, png);
    fake = await startFakeUpstream(png);
    fake.state.mode = 'ok';
    const port = new URL(fake.url).port;
    const up = (host: string, extra: Record<string, unknown> = {}) => ({
      backend: 'same-api',
      base_url: `http://${host}:${port}`,
      key_env: 'UP_KEY',
      ...extra,
    });
    const catalog = path.join(scratch, `catalog-${dialect}.json`);
    writeFileSync(
      catalog,
      JSON.stringify({
        models: {
          // Trusted by the route itself.
          'nano-banana-2': { routes: [up('127.0.0.1', { private_network: true })] },
          // Trusted by UPSTREAM_PRIVATE_HOSTS.
          'nano-banana-pro': { routes: [up('localhost')] },
          // Not trusted: another loopback address.
          'google/nano-banana': { routes: [up('127.0.0.2')] },
        },
      }),
    );
    s = await startServer(dialect, { ...FAST, GENGATE_CATALOG: catalog, UP_KEY: 'k', UPSTREAM_PRIVATE_HOSTS: 'localhost', ENGINE_MAX_ATTEMPTS: '1' });
    s.services.engine.start();
  });
  afterAll(async () => {
    await s?.close();
    await fake?.close();
  });

  it('reaches an upstream on loopback through private_network or UPSTREAM_PRIVATE_HOSTS; another private one stays refused', async () => {
    const a = await s.account(5);
    expect((await settle(s, a.key, await create(s, a.key, 'nano-banana-2', { prompt: 'a lan job' }))).state).toBe('success');
    expect((await settle(s, a.key, await create(s, a.key, 'nano-banana-pro', { prompt: 'a named host' }))).state).toBe('success');
    const refused = await settle(s, a.key, await create(s, a.key, 'google/nano-banana', { prompt: 'an untrusted host' }));
    expect(refused).toMatchObject({ state: 'fail', failCode: 503, refunded: true });
    expect(fake.creates).toHaveLength(2);
  });

  it("keeps customers' callBackUrls on the trusted hosts refused", async () => {
    const a = await s.account(5);
    for (const host of ['127.0.0.1', 'localhost']) {
      const r = await s.call('POST', '/api/v1/jobs/createTask', {
        key: a.key,
        body: { model: 'nano-banana-2', input: { prompt: 'p' }, callBackUrl: `http://${host}:${new URL(fake.url).port}/hook` },
      });
      expect(r.status, JSON.stringify(r.body)).toBe(400);
      expect(r.body.msg).toMatch(/callBackUrl/);
    }
  });

  it('says which hosts are trusted (services.upstreamGuard), and the customers’ guard trusts none', () => {
    expect([...s.services.upstreamGuard.privateHosts].sort()).toEqual(['127.0.0.1', 'localhost']);
    expect(s.services.guard.privateOk('127.0.0.1')).toBe(false);
  });
});

describe('UPSTREAM_PRIVATE_HOSTS and private_network settings', () => {
  it('reads a comma-separated host list and refuses URLs or ports in it', () => {
    expect(loadConfig({ UPSTREAM_PRIVATE_HOSTS: ' GPU-1.lan, 10.0.0.5 ,[fd00::5]' }).UPSTREAM_PRIVATE_HOSTS).toEqual(['gpu-1.lan', '10.0.0.5', '[fd00::5]']);
    expect(() => loadConfig({ UPSTREAM_PRIVATE_HOSTS: 'http://gpu-1:8188' })).toThrow(ConfigError);
    expect(() => loadConfig({ UPSTREAM_PRIVATE_HOSTS: 'gpu-1:8188' })).toThrow(/UPSTREAM_PRIVATE_HOSTS/);
  });
});
