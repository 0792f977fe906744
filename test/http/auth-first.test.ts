import type { Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { open, untilClosed, within } from '../helpers/sockets.js';

/** A request whose headers promise `length` body bytes, of which only `sent` arrive (the rest never comes). */
async function unfinished(url: string, path: string, headers: Record<string, string>, length: number, sent: string): Promise<{ text: string; socket: Socket }> {
  const socket = await open(url);
  const closed = untilClosed(socket);
  const head = Object.entries({ host: 'x', 'content-type': 'application/json', 'content-length': String(length), ...headers })
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  socket.write(`POST ${path} HTTP/1.1\r\n${head}\r\n${sent}`);
  // The answer comes although the body never ends, and the connection is closed after it.
  const text = await within(closed, 15_000, `answering POST ${path} before its body arrives`);
  return { text, socket };
}

const statusOf = (text: string) => Number(text.split(' ')[1]);

/**
 * Issue 39 finding 1: the key (or session, or MCP credential) is checked before any byte of the
 * body is read, on every route that takes one. A wrong key with a body that never finishes (or a
 * huge one) is answered 401 at once and the connection closed, instead of the server waiting for
 * and holding the body.
 */
for (const dialect of dialects()) {
  describe(`authentication comes before the body on ${dialect}`, () => {
    let s: TestServer;
    beforeAll(async () => {
      s = await startServer(dialect, { HTTP_REQUEST_TIMEOUT_MS: '600000', HTTP_BODY_MIN_BYTES_PER_SECOND: '0', MODERATION_IMAGES: 'off' });
    });
    afterAll(async () => {
      await s.close();
    });

    const wrongKey = { authorization: 'Bearer gg_live_wrongwrongwrongwrongwrongwrong' };
    const cases: Array<[string, Record<string, string>, number]> = [
      ['/api/file-base64-upload', wrongKey, 8 * 1024 * 1024],
      ['/api/file-base64-upload', {}, 8 * 1024 * 1024],
      ['/api/v1/jobs/createTask', wrongKey, 900_000],
      ['/api/v1/keys', wrongKey, 60_000],
      ['/api/file-url-upload', wrongKey, 60_000],
      ['/api/v1/files/upload', { ...wrongKey, 'content-type': 'multipart/form-data; boundary=x' }, 8 * 1024 * 1024],
      ['/api/v1/auth/members/invite', { cookie: 'gg_session=not-a-session', 'x-csrf-token': 'x' }, 10_000],
      ['/mcp', { ...wrongKey, accept: 'application/json, text/event-stream' }, 60_000],
    ];
    for (const [path, headers, length] of cases) {
      it(`POST ${path} ${headers.authorization ? 'with a wrong key' : headers.cookie ? 'with a wrong session' : 'without a key'}: 401 before the body arrives, then closed`, async () => {
        const { text } = await unfinished(s.url, path, headers, length, '{"base64Data":"iVBORw0KGgo');
        expect(statusOf(text), text).toBe(401);
        expect(text.toLowerCase()).toContain('connection: close');
      });
    }

    it('a body over the route cap is refused from its Content-Length, after the key, before it is read', async () => {
      const { key } = await s.account(1);
      // /api/v1/keys takes a few small fields: 64 KB at most, whatever BODY_LIMIT_BYTES allows.
      const { text } = await unfinished(s.url, '/api/v1/keys', { authorization: `Bearer ${key}` }, 200_000, '{"name":"');
      expect(statusOf(text), text).toBe(422);
      expect(text).toContain('larger than the limit of 65536 bytes');
      const auth = await unfinished(s.url, '/api/v1/auth/signin', {}, 100_000, '{"email":"');
      expect(statusOf(auth.text), auth.text).toBe(422);
      expect(auth.text).toContain('larger than the limit of 16384 bytes');
    });
  });
}
