import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import http from 'node:http';

/** One request a fake provider received, body parsed as JSON when it is JSON. */
export interface Call {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: http.IncomingHttpHeaders;
  text: string;
  json: unknown;
}

/** What a fake's handler answers: a JSON body, raw text, nothing (the request hangs), or a dropped connection after the request was read (a lost answer). */
export type Answer = { status: number; json?: unknown; text?: string; headers?: Record<string, string> } | 'hang' | 'drop';

/**
 * A small provider double on 127.0.0.1 (port 0): records every call, answers through `handle`, and
 * serves result files registered with `media` under /media/<name> (real files made by ffmpeg).
 */
export async function startFake(handle: (call: Call, base: string) => Answer | Promise<Answer>) {
  const calls: Call[] = [];
  const media = new Map<string, { path: string; mime: string }>();
  let base = '';
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const url = new URL(req.url ?? '/', base);
        const text = Buffer.concat(chunks).toString('utf8');
        let json: unknown;
        try {
          json = text ? JSON.parse(text) : undefined;
        } catch {
          json = undefined;
        }
        const file = url.pathname.startsWith('/media/') ? media.get(url.pathname.slice('/media/'.length)) : undefined;
        if (file) {
          const size = (await stat(file.path)).size;
          res.writeHead(200, { 'content-type': file.mime, 'content-length': String(size) });
          createReadStream(file.path).pipe(res);
          return;
        }
        const call: Call = { method: req.method ?? '', path: url.pathname, query: url.searchParams, headers: req.headers, text, json };
        calls.push(call);
        // Result links are public (signed) addresses: an unknown one is simply not found, whatever the key.
        const answer = url.pathname.startsWith('/media/') ? { status: 404, text: 'NoSuchKey' } : await handle(call, base);
        if (answer === 'hang') return;
        if (answer === 'drop') {
          req.socket.destroy();
          return;
        }
        const body = answer.text ?? (answer.json === undefined ? '' : JSON.stringify(answer.json));
        res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers }).end(body);
      })().catch((e: unknown) => res.writeHead(599).end(String(e)));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  return {
    url: base,
    calls,
    /** Serves a local file at `${url}/media/${name}`. */
    media(name: string, path: string, mime: string): string {
      media.set(name, { path, mime });
      return `${base}/media/${name}`;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
