import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { NotAccepted, UpstreamHttp, retryAfterMs } from '../../src/backends/upstream/index.js';
import { NetError, NetGuard } from '../../src/net/index.js';
import { closedPort } from '../callbacks/receiver.js';
import { hashOf, makeClip, useTmpDir } from '../media/helpers.js';

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** A loopback server whose answers the tests script by path. */
async function startServer(files: Map<string, Buffer>) {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const full = req.url ?? '/';
      const url = full.split('?')[0]!;
      seen.push({ method: req.method ?? '', url: full, headers: req.headers, body: Buffer.concat(chunks) });
      const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
        res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
      if (url === '/echo') return json(200, { method: req.method, got: JSON.parse(Buffer.concat(chunks).toString() || 'null') });
      if (url === '/busy') return json(429, { error: 'slow down' }, { 'retry-after': '7' });
      if (url === '/down') return json(503, { error: 'maintenance' });
      if (url === '/bad') return json(422, { detail: [{ loc: ['body', 'prompt'], msg: 'field required' }] });
      if (url === '/garbage') return res.writeHead(200, { 'content-type': 'application/json' }).end('{"id": ');
      if (url === '/hang' || url === '/file/hang') return; // never answers
      if (url === '/moved') return res.writeHead(302, { location: '/file/clip.mp4' }).end();
      if (url === '/elsewhere') return res.writeHead(302, { location: `http://localhost:${req.socket.localPort}/file/clip.mp4` }).end();
      if (url === '/file/slow') {
        res.writeHead(200, { 'content-type': 'video/mp4' });
        res.write(Buffer.alloc(1000)); // then stalls
        return;
      }
      const file = files.get(url);
      if (file) return res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': String(file.length) }).end(file);
      json(404, { error: 'not found' });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  return {
    base,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe('UpstreamHttp', () => {
  const tmp = useTmpDir();
  const files = new Map<string, Buffer>();
  let server: Awaited<ReturnType<typeof startServer>>;
  const guard = new NetGuard({ allowPrivate: true });
  const strict = new NetGuard({ allowPrivate: false });
  const up = new UpstreamHttp(guard, { timeoutMs: 2000 });

  beforeAll(async () => {
    server = await startServer(files);
  });
  afterAll(async () => {
    guard.close();
    strict.close();
    await server.close();
  });

  async function thrown(p: Promise<unknown>): Promise<unknown> {
    return p.then(
      () => {
        throw new Error('expected a failure');
      },
      (e: unknown) => e,
    );
  }

  it('sends and reads JSON, with the caller’s headers', async () => {
    const res = await up.json('PUT', `${server.base}/echo`, { headers: { authorization: 'Key k1' }, body: { a: 1 } });
    expect(res.status).toBe(200);
    expect(res.data).toEqual({ method: 'PUT', got: { a: 1 } });
    const last = server.seen.at(-1)!;
    expect(last.headers.authorization).toBe('Key k1');
    expect(last.headers['content-type']).toBe('application/json');
  });

  it('keeps a body that is not JSON as text', async () => {
    const res = await up.json('GET', `${server.base}/garbage`);
    expect(res.data).toBeUndefined();
    expect(res.text).toBe('{"id": ');
  });

  it('create: 429 is NotAccepted with its Retry-After, 5xx is NotAccepted, 422 is returned to the adapter', async () => {
    const busy = await thrown(up.create('POST', `${server.base}/busy`, { body: {} }));
    expect(busy).toBeInstanceOf(NotAccepted);
    expect((busy as NotAccepted).retryAfterMs).toBe(7000);
    expect((busy as NotAccepted).message).toMatch(/HTTP 429.*slow down/);
    const down = await thrown(up.create('POST', `${server.base}/down`, { body: {} }));
    expect(down).toBeInstanceOf(NotAccepted);
    expect((down as NotAccepted).retryAfterMs).toBeUndefined();
    const bad = await up.create('POST', `${server.base}/bad`, { body: {} });
    expect(bad.status).toBe(422);
  });

  it('create: a refused connection and a timeout are NotAccepted', async () => {
    const port = await closedPort();
    const refused = await thrown(up.create('POST', `http://127.0.0.1:${port}/x`, { body: {} }));
    expect(refused).toBeInstanceOf(NotAccepted);
    expect((refused as Error).message).toMatch(/connection refused/);
    const hung = await thrown(
      up.create('POST', `${server.base}/hang?fal_webhook=https%3A%2F%2Fgg.example%2Fnotify%2Fsecret-token`, { body: {}, timeoutMs: 200 }),
    );
    expect((hung as Error).message).not.toContain('secret-token');
    expect(hung).toBeInstanceOf(NotAccepted);
    expect((hung as Error).message).toMatch(/within 200 ms/);
  });

  it('reads Retry-After as seconds or as an HTTP date', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(retryAfterMs('3', now)).toBe(3000);
    expect(retryAfterMs('Thu, 01 Jan 2026 00:00:10 GMT', now)).toBe(10_000);
    expect(retryAfterMs('soon', now)).toBeUndefined();
    expect(retryAfterMs(undefined, now)).toBeUndefined();
  });

  it('uploads a file as multipart/form-data, streamed with its length', async () => {
    const file = tmp('photo.bin');
    const bytes = Buffer.from(Array.from({ length: 5000 }, (_, i) => i % 256));
    await writeFile(file, bytes);
    await up.upload(`${server.base}/echo-upload`, file, {
      fields: { purpose: 'input' },
      mime: 'image/png',
      filename: 'a.png',
      headers: { authorization: 'Bearer t' },
    });
    const got = server.seen.at(-1)!;
    expect(got.method).toBe('POST');
    expect(got.headers.authorization).toBe('Bearer t');
    const boundary = /boundary=(.+)$/.exec(got.headers['content-type']!)![1]!;
    expect(Number(got.headers['content-length'])).toBe(got.body.length);
    const text = got.body.toString('latin1');
    expect(text).toContain(`--${boundary}\r\ncontent-disposition: form-data; name="purpose"\r\n\r\ninput\r\n`);
    expect(text).toContain('name="file"; filename="a.png"\r\ncontent-type: image/png\r\n\r\n');
    const start = got.body.indexOf('\r\n\r\n', got.body.indexOf('filename=')) + 4;
    expect(got.body.subarray(start, start + bytes.length).equals(bytes)).toBe(true);
    expect(text.endsWith(`\r\n--${boundary}--\r\n`)).toBe(true);
  });

  it('an upload to a closed port fails with a network error', async () => {
    const file = tmp('a.bin');
    await writeFile(file, Buffer.alloc(200_000, 7));
    const e = await thrown(up.upload(`http://127.0.0.1:${await closedPort()}/files/upload`, file));
    expect(e).toBeInstanceOf(NetError);
    expect((e as NetError).message).toMatch(/connection refused/);
  });

  it('downloads a real video to a file, following a redirect', async () => {
    const clip = await makeClip(tmp('clip.mp4'), { seconds: 1 });
    files.set('/file/clip.mp4', await readFile(clip));
    const dest = tmp('out.mp4');
    const res = await up.download(`${server.base}/moved`, dest);
    expect(res.mime).toBe('video/mp4');
    expect(res.bytes).toBe(files.get('/file/clip.mp4')!.length);
    expect(await hashOf(dest)).toBe(await hashOf(clip));
  });

  it('download: headers follow a redirect on the same origin only', async () => {
    const clip = await makeClip(tmp('c.mp4'), { seconds: 1 });
    files.set('/file/clip.mp4', await readFile(clip));
    const before = server.seen.length;
    await up.download(`${server.base}/moved`, tmp('same.mp4'), { headers: { authorization: 'Bearer same' } });
    expect(server.seen.slice(before).map((r) => r.headers.authorization)).toEqual(['Bearer same', 'Bearer same']);
    const mid = server.seen.length;
    await up.download(`${server.base}/elsewhere`, tmp('other.mp4'), { headers: { authorization: 'Bearer same' } });
    expect(server.seen.slice(mid).map((r) => r.headers.authorization)).toEqual(['Bearer same', undefined]);
    expect(await hashOf(tmp('other.mp4'))).toBe(await hashOf(clip));
  });

  it('download: too large, too slow and not found fail and leave no partial file', async () => {
    files.set('/file/big', Buffer.alloc(50_000));
    const big = tmp('big');
    const e1 = await thrown(up.download(`${server.base}/file/big`, big, { maxBytes: 10_000 }));
    expect((e1 as NetError).code).toBe('too_large');
    expect(existsSync(big)).toBe(false);

    const slow = tmp('slow');
    const e2 = await thrown(up.download(`${server.base}/file/slow`, slow, { timeoutMs: 300 }));
    expect((e2 as NetError).code).toBe('timeout');
    expect(existsSync(slow)).toBe(false);

    const gone = tmp('gone');
    const e3 = await thrown(up.download(`${server.base}/file/none`, gone));
    expect(e3).toBeInstanceOf(NetError);
    expect((e3 as NetError).status).toBe(404);
    expect(existsSync(gone)).toBe(false);
  });

  it('with ALLOW_PRIVATE_NETWORK off, refuses to download from loopback', async () => {
    files.set('/file/x', Buffer.from('secret'));
    const strictUp = new UpstreamHttp(strict);
    const dest = tmp('x');
    const before = server.seen.length;
    for (const url of [`${server.base}/file/x`, server.base.replace('127.0.0.1', 'localhost') + '/file/x']) {
      const e = await thrown(strictUp.download(url, dest));
      expect(e).toBeInstanceOf(NetError);
      expect((e as NetError).code).toBe('blocked');
    }
    expect(existsSync(dest)).toBe(false);
    expect(server.seen.length).toBe(before);
  });

  it('socketTarget: the ws: or wss: address of an upstream, checked by the guard; with ALLOW_PRIVATE_NETWORK off a websocket to loopback never connects', async () => {
    const open = up.socketTarget('http://127.0.0.1:8188/ws?clientId=c1');
    expect(open.url.toString()).toBe('ws://127.0.0.1:8188/ws?clientId=c1');
    expect(open.createConnection).toBeUndefined();
    const strictUp = new UpstreamHttp(strict);
    const secure = strictUp.socketTarget('https://gpu.example.com/comfy/ws?clientId=c1');
    expect(secure.url.toString()).toBe('wss://gpu.example.com/comfy/ws?clientId=c1');
    expect(typeof secure.createConnection).toBe('function');
    for (const bad of ['http://127.0.0.1:8188/ws', 'http://[::1]:8188/ws', 'ftp://gpu/ws']) {
      const e = await thrown(Promise.resolve().then(() => strictUp.socketTarget(bad)));
      expect(e).toBeInstanceOf(NetError);
    }
    // A name that resolves to loopback: the connection is refused before any TCP connection is made.
    let connections = 0;
    const listener = net.createServer((c) => {
      connections++;
      c.destroy();
    });
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    const port = (listener.address() as net.AddressInfo).port;
    const target = strictUp.socketTarget(`http://localhost:${port}/ws`);
    const ws = new WebSocket(target.url, { createConnection: target.createConnection as never });
    const error = await new Promise<Error>((resolve) => ws.on('error', resolve));
    expect(error.message).toMatch(/localhost resolves to .*(127\.0\.0\.1|::1)/);
    await new Promise<void>((resolve) => listener.close(() => resolve()));
    expect(connections).toBe(0);
  });
});
