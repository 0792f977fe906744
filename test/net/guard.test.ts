import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NetGuard, NetError, isBlockedAddress, privateNetworkNotice } from '../../src/net/index.js';
import { startReceiver } from '../callbacks/receiver.js';

type Receiver = Awaited<ReturnType<typeof startReceiver>>;

describe('isBlockedAddress', () => {
  it.each([
    '127.0.0.1',
    '127.255.0.9',
    '10.1.2.3',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254',
    '100.100.100.200',
    '0.0.0.0',
    '224.0.0.1',
    '255.255.255.255',
    '::1',
    '::',
    'fe80::1',
    'fd00:ec2::254',
    'fc00::5',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:169.254.169.254',
    '64:ff9b::a00:1',
    '[::1]',
    'fe80::1%eth0',
    'not-an-ip',
  ])('blocks %s', (ip) => expect(isBlockedAddress(ip)).toBe(true));

  it.each(['8.8.8.8', '1.1.1.1', '172.32.0.1', '192.169.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8'])('allows %s', (ip) =>
    expect(isBlockedAddress(ip)).toBe(false),
  );

  // Issue 17 item 4: IPv6 forms that carry an IPv4 address, and special-purpose ranges the old list missed.
  it.each([
    '::127.0.0.1',
    '::7f00:1',
    '::169.254.169.254',
    '::ffff:0:127.0.0.1',
    '::ffff:0:7f00:1',
    '2002::',
    '2002:7f00:1::1',
    '2002:a9fe:a9fe::1',
    '2001:0:808:808::80ff:fffe',
    '2001:0:7f00:1::f7f7:f7f7',
    'fec0::1',
    '64:ff9b:1::808:808',
    '100:0:0:1::1',
    '2001:2::1',
    '2001:10::1',
    '2001:20::1',
    '3fff::1',
    '5f00::1',
    '4000::1',
    '192.88.99.1',
    '192.31.196.1',
    '192.175.48.1',
    '127.1',
  ])('blocks %s (embedded IPv4 and IANA special-purpose ranges)', (ip) => expect(isBlockedAddress(ip)).toBe(true));

  it.each(['64:ff9b::808:808', '2002:808:808::1', '2001:0:808:808::f7f7:f7f7', '::ffff:0:8.8.8.8'])('allows %s (carries a public IPv4 address)', (ip) =>
    expect(isBlockedAddress(ip)).toBe(false),
  );

  it('judges every IPv6 form that carries an IPv4 address by that address', () => {
    const hex = (o: number[]) => `${((o[0]! << 8) | o[1]!).toString(16)}:${((o[2]! << 8) | o[3]!).toString(16)}`;
    const inverted = (o: number[]) => hex(o.map((x) => x ^ 255));
    const forms = (o: number[]) => {
      const dotted = o.join('.');
      return [
        `::ffff:${dotted}`,
        `::ffff:${hex(o)}`,
        `::${dotted}`,
        `::ffff:0:${dotted}`,
        `64:ff9b::${dotted}`,
        `2002:${hex(o)}::1`,
        `2001:0:${hex(o)}::${inverted([8, 8, 8, 8])}`,
        `2001:0:808:808::${inverted(o)}`,
      ];
    };
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 255 }), { minLength: 4, maxLength: 4 }), (octets) => {
        const blocked = isBlockedAddress(octets.join('.'));
        // ::0.0.0.0 and ::0.0.0.1 are the unspecified and loopback addresses themselves: blocked either way.
        for (const form of forms(octets)) expect([form, isBlockedAddress(form)]).toEqual([form, blocked]);
      }),
      { numRuns: 300 },
    );
  });
});

describe('NetGuard', () => {
  let r: Receiver;
  const strict = new NetGuard({ allowPrivate: false });
  const open = new NetGuard({ allowPrivate: true, timeoutMs: 300, maxBytes: 100 });
  beforeAll(async () => {
    r = await startReceiver((path) => (path === '/hang' ? 'hang' : path === '/moved' ? { redirect: '/ok' } : 200));
  });
  afterAll(async () => {
    strict.close();
    open.close();
    await r.close();
  });

  async function refusal(p: Promise<unknown>): Promise<NetError> {
    const e = await p.then(
      () => null,
      (x: unknown) => x,
    );
    expect(e).toBeInstanceOf(NetError);
    return e as NetError;
  }

  it('refuses a loopback address literal before connecting', async () => {
    const port = new URL(r.url).port;
    for (const host of [
      '127.0.0.1',
      '[::1]',
      '[::ffff:127.0.0.1]',
      '0.0.0.0',
      '[::127.0.0.1]',
      '[::169.254.169.254]',
      '[::ffff:0:127.0.0.1]',
      '[2002:7f00:1::1]',
      '[fec0::1]',
    ]) {
      expect((await refusal(strict.fetch(`http://${host}:${port}/ok`))).code).toBe('blocked');
    }
    expect(r.received).toHaveLength(0);
  });

  it('refuses a name that resolves to loopback when connecting (DNS is checked at connect time)', async () => {
    const e = await refusal(strict.fetch(`http://localhost:${new URL(r.url).port}/ok`, { method: 'POST', body: 'x' }));
    expect(e.code).toBe('blocked');
    expect(e.message).toMatch(/localhost resolves to .*127\.0\.0\.1|::1/);
    expect(r.received).toHaveLength(0);
    await expect(strict.check(`http://localhost:${new URL(r.url).port}/`)).rejects.toThrow(/private, loopback/);
  });

  it('refuses other schemes and credentials', async () => {
    expect((await refusal(strict.fetch('file:///etc/passwd'))).code).toBe('bad_url');
    expect((await refusal(strict.fetch('ftp://example.com/x'))).code).toBe('bad_url');
    expect((await refusal(strict.fetch('http://user:pw@example.com/'))).code).toBe('bad_url');
  });

  it('with ALLOW_PRIVATE_NETWORK reaches loopback, but keeps the time and size limits', async () => {
    expect((await open.fetch(`${r.url}/ok`)).status).toBe(200);
    expect((await refusal(open.fetch(`${r.url}/hang`))).code).toBe('timeout');
    expect((await refusal(open.fetch(`${r.url}/ok`, { maxBytes: 1 }))).code).toBe('too_large');
  });

  it('returns a redirect unfollowed unless asked to follow', async () => {
    const res = await open.fetch(`${r.url}/moved`);
    expect(res.status).toBe(302);
    const followed = await open.fetch(`${r.url}/moved`, { maxRedirects: 2 });
    expect(followed.status).toBe(200);
    expect(followed.url).toBe(`${r.url}/ok`);
  });

  // Issue 36 item 3, decision 2502: trusted upstream hosts on private addresses, everything else still guarded.
  it('reaches loopback only on the trusted hosts named in privateHosts, by literal or by name, and follows no redirect elsewhere', async () => {
    const port = new URL(r.url).port;
    const byAddress = new NetGuard({ allowPrivate: false, privateHosts: ['127.0.0.1'] });
    const byName = new NetGuard({ allowPrivate: false, privateHosts: ['LocalHost'] });
    try {
      expect((await byAddress.fetch(`http://127.0.0.1:${port}/ok`)).status).toBe(200);
      await byAddress.check(`http://127.0.0.1:${port}/ok`);
      // Another loopback host is not trusted: refused before connecting, or at connect time for a name.
      expect((await refusal(byAddress.fetch(`http://127.0.0.2:${port}/ok`))).code).toBe('blocked');
      expect((await refusal(byAddress.fetch(`http://localhost:${port}/ok`))).code).toBe('blocked');
      expect((await byName.fetch(`http://localhost:${port}/ok`)).status).toBe(200);
      expect((await refusal(byName.fetch(`http://127.0.0.1:${port}/ok`))).code).toBe('blocked');
      // A redirect from a trusted host to an untrusted private one is checked again.
      const hop = await startReceiver(() => ({ redirect: `http://127.0.0.1:${port}/ok` }));
      try {
        const trustsHop = new NetGuard({ allowPrivate: false, privateHosts: ['localhost'] });
        expect((await refusal(trustsHop.fetch(`http://localhost:${new URL(hop.url).port}/x`, { maxRedirects: 2 }))).code).toBe('blocked');
        trustsHop.close();
      } finally {
        await hop.close();
      }
    } finally {
      byAddress.close();
      byName.close();
    }
  });

  it('the trusted list is per guard: the customers’ guard keeps refusing', async () => {
    expect(strict.privateOk('127.0.0.1')).toBe(false);
    expect(new NetGuard({ allowPrivate: false, privateHosts: ['[::1]', 'GPU-1.lan'] }).privateOk('gpu-1.LAN')).toBe(true);
    expect(new NetGuard({ allowPrivate: false, privateHosts: ['[::1]'] }).privateOk('[::1]')).toBe(true);
  });
});

describe('privateNetworkNotice', () => {
  it('warns when ALLOW_PRIVATE_NETWORK is on, naming what it opens and the narrower settings', () => {
    const n = privateNetworkNotice(true, []);
    expect(n?.level).toBe('warn');
    for (const part of ['callBackUrl', 'photo', 'metadata', '169.254.169.254', 'private_network', 'UPSTREAM_PRIVATE_HOSTS']) expect(n?.msg).toContain(part);
  });
  it('names the trusted hosts when only those are open, and says nothing when none is', () => {
    expect(privateNetworkNotice(false, ['gpu-1.lan', '10.0.0.5'])).toMatchObject({ level: 'info', msg: expect.stringContaining('gpu-1.lan, 10.0.0.5') });
    expect(privateNetworkNotice(false, [])).toBeNull();
  });
});
