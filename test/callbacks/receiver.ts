import http from 'node:http';

/** One request a test receiver got. */
export interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A real HTTP receiver on 127.0.0.1 whose answer per path the test scripts; it records every request. */
export async function startReceiver(answer: (path: string, count: number) => number | 'hang' | { redirect: string }) {
  const received: Received[] = [];
  const counts = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '/';
      const count = (counts.get(path) ?? 0) + 1;
      counts.set(path, count);
      received.push({ path, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      const a = answer(path, count);
      if (a === 'hang') return;
      if (typeof a === 'object') {
        res.writeHead(302, { location: a.redirect }).end();
        return;
      }
      res.writeHead(a, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  return {
    url,
    received,
    at: (path: string) => received.filter((r) => r.path === path),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A loopback port nobody listens on (taken, then released). */
export async function closedPort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
