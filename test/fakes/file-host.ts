import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import http from 'node:http';

/**
 * A small file host on 127.0.0.1 (port 0), the far end of kie.ai's file-url-upload: serves the files
 * registered with `serve` under /<name>, 404 for anything else.
 */
export async function startFileHost() {
  const files = new Map<string, string>();
  const server = http.createServer((req, res) => {
    const file = files.get(decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname.slice(1)));
    if (!file) return res.writeHead(404).end('not here');
    void stat(file).then((s) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(s.size) });
      createReadStream(file).pipe(res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  return {
    base,
    /** Makes `file` available at `${base}/${name}`; returns that link. */
    serve(name: string, file: string): string {
      files.set(name, file);
      return `${base}/${encodeURIComponent(name)}`;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
