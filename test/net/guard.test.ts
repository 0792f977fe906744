import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NetGuard, NetError, isBlockedAddress } from '../../src/net/index.js';
import { startReceiver } from '../callbacks/receiver.js';

type Receiver = Awaited<ReturnType<typeof startReceiver>>;

describe('isBlockedAddress', () => {
  it.each([
    '127.0.0.1', '127.255.0.9', '10.1.2.3', '172.16.0.1', '172.31.255.255', '192.168.1.1', '169.254.169.254', '100.100.100.200',
    '0.0.0.0', '224.0.0.1', '255.255.255.255', '::1', '::', 'fe80::1', 'fd00:ec2::254', 'fc00::5', '::ffff:127.0.0.1',
    '::ffff:7f00:1', '::ffff:169.254.169.254', '64:ff9b::a00:1', '[::1]', 'fe80::1%eth0', 'not-an-ip',
  ])('blocks %s', (ip) => expect(isBlockedAddress(ip)).toBe(true));

  it.each(['8.8.8.8', '1.1.1.1', '172.32.0.1', '192.169.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8'])('allows %s', (ip) =>
    expect(isBlockedAddress(ip)).toBe(false),
  );
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
    const e = await p.then(() => null, (x: unknown) => x);
    expect(e).toBeInstanceOf(NetError);
    return e as NetError;
  }

  it('refuses a loopback address literal before connecting', async () => {
    const port = new URL(r.url).port;
    for (const host of ['127.0.0.1', '[::1]', '[::ffff:127.0.0.1]', '0.0.0.0']) {
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
});
