import { afterAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { addressSubject } from '../../src/limits/index.js';
import { loadConfig } from '../../src/config.js';

/**
 * Issue 39 finding 3: the client address behind proxies is the rightmost X-Forwarded-For hop that
 * is not a trusted proxy (a client's own header cannot move it), and IPv6 clients count per /64.
 */
const PASSWORD = 'correct horse battery';

describe('what a per-address limit counts', () => {
  it('an IPv4 address as it is, a mapped one as its IPv4 address, an IPv6 address by its /64', () => {
    expect(addressSubject('203.0.113.7')).toBe('203.0.113.7');
    expect(addressSubject('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(addressSubject('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
    expect(addressSubject('2001:db8:1:2:ffff:ffff:ffff:ffff')).toBe('2001:db8:1:2::/64');
    expect(addressSubject('2001:db8:1:3::1')).toBe('2001:db8:1:3::/64');
    expect(addressSubject(null)).toBe('?');
  }, 120_000);

  it('TRUSTED_PROXIES takes addresses and ranges and refuses anything else, naming the setting', () => {
    const base = { DATA_DIR: '/tmp/x', LOG_LEVEL: 'silent' };
    expect(loadConfig({ ...base, TRUSTED_PROXIES: '10.0.0.5, 10.1.0.0/16,fd00::/8,loopback' }).TRUSTED_PROXIES).toEqual([
      '10.0.0.5',
      '10.1.0.0/16',
      'fd00::/8',
      'loopback',
    ]);
    expect(() => loadConfig({ ...base, TRUSTED_PROXIES: '10.0.0.5,proxy.example.com' })).toThrow(/TRUSTED_PROXIES/);
    expect(() => loadConfig({ ...base, TRUSTED_PROXIES: '10.0.0.0/40' })).toThrow(/TRUSTED_PROXIES/);
  }, 120_000);
});

describe.each(dialects())('proxy trust and per-address limits on %s', (dialect) => {
  const servers: TestServer[] = [];
  const start = async (env: Record<string, string>) => {
    const s = await startServer(dialect, { SIGNIN_LIMIT_PER_ADDRESS: '5', SIGNIN_LIMIT_PER_EMAIL: '1000', RUN_ENGINE: 'false', ...env });
    servers.push(s);
    return s;
  };
  afterAll(async () => {
    for (const s of servers) await s.close();
  });

  const attempt = (s: TestServer, n: number, xff: string) =>
    s.call('POST', '/api/v1/auth/signin', { body: { email: `u${n}@example.com`, password: PASSWORD }, headers: { 'x-forwarded-for': xff } });

  /** Six sign-ins whose leftmost hop the client makes up each time, through one proxy that appends the real address. */
  async function spoofed(s: TestServer): Promise<number[]> {
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await attempt(s, i, `198.51.100.${i + 1}, 203.0.113.50`)).status);
    return statuses;
  }

  it('TRUSTED_PROXIES: the rightmost untrusted hop is the client, whatever it writes on the left', async () => {
    const s = await start({ TRUSTED_PROXIES: '127.0.0.1' });
    expect(await spoofed(s)).toEqual([401, 401, 401, 401, 401, 429]);
    // Another real client behind the same proxy is not limited.
    expect((await attempt(s, 9, '203.0.113.51')).status).toBe(401);
  }, 120_000);

  it('TRUST_PROXY=true trusts one proxy: the hop it appended, not the leftmost one the client wrote', async () => {
    const s = await start({ TRUST_PROXY: 'true' });
    expect(await spoofed(s)).toEqual([401, 401, 401, 401, 401, 429]);
  }, 120_000);

  it('a peer that is not a listed proxy is the client itself: its X-Forwarded-For is ignored', async () => {
    const s = await start({ TRUSTED_PROXIES: '10.9.9.9' });
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await attempt(s, i, `203.0.113.${i + 1}`)).status);
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429]);
  }, 120_000);

  it('IPv6 clients are limited per /64: fresh addresses in one /64 share the budget, another /64 has its own', async () => {
    const s = await start({ TRUSTED_PROXIES: 'loopback' });
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await attempt(s, i, `2001:db8:0:7::${(i + 1).toString(16)}`)).status);
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429]);
    expect((await attempt(s, 9, '2001:db8:0:8::1')).status).toBe(401);
  }, 120_000);

  it('the public limit counts per /64 too', async () => {
    const s = await start({ TRUSTED_PROXIES: 'loopback', RATE_LIMIT_PUBLIC: '3' });
    const models = async (from: string) => (await s.call('GET', '/api/v1/models', { headers: { 'x-forwarded-for': from } })).status;
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push(await models(`2001:db8:0:9::${i + 1}`));
    statuses.push(await models('2001:db8:0:a::1'), await models('2001:db8:0:9::4'));
    expect(statuses).toEqual([200, 200, 200, 200, 429]);
  }, 120_000);
});
