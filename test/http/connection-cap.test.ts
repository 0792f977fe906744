import { get } from 'node:http';
import type { Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { open, untilClosed, within } from '../helpers/sockets.js';

const CAP = 5;

/** The status of GET `path` from `localAddress` on its own connection. */
function statusFrom(url: string, path: string, localAddress: string): Promise<number> {
  return new Promise((resolve, reject) => {
    get(`${url}${path}`, { localAddress, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode!));
    }).on('error', reject);
  });
}

/**
 * Issue 39 finding 12: a connection over the per-address cap gets an answer (503 with Retry-After
 * in the envelope), not a reset, and is counted in metrics; past twice the cap a new connection is
 * still closed at once (so a flood cannot hoard open files), and counted too.
 */
for (const dialect of dialects()) {
  describe(`connections over the per-address cap on ${dialect}`, () => {
    let s: TestServer;
    beforeAll(async () => {
      // A long header timeout: the idle connections below are closed by the test, never by a timer.
      s = await startServer(dialect, { HTTP_MAX_CONNECTIONS_PER_ADDRESS: String(CAP), HTTP_HEADERS_TIMEOUT_MS: '60000', MODERATION_IMAGES: 'off' });
    });
    afterAll(async () => {
      await s.close();
    });

    const cuts = async () => {
      const values = (await s.services.metrics.connectionsCut.get()).values;
      return Object.fromEntries(values.map((v) => [v.labels.reason, v.value]));
    };

    it('over the cap: 503 with Retry-After and the envelope; past twice the cap: closed at once; both counted', async () => {
      const before = await cuts();
      const kept: Socket[] = [];
      for (let i = 0; i < CAP; i++) {
        const socket = await open(s.url);
        const first = new Promise((resolve) => socket.once('data', resolve));
        socket.write('GET /healthz HTTP/1.1\r\nhost: x\r\n\r\n');
        await first;
        kept.push(socket);
      }
      // As many again, idle: the server accepts connections in order, so these are all counted
      // before the one after them.
      const over: Socket[] = [];
      for (let i = 0; i < CAP; i++) over.push(await open(s.url));
      const overClosed = over.map(untilClosed);
      const past = await within(open(s.url).then(untilClosed), 20_000, 'closing a connection past twice the cap');
      expect(past).toBe('');
      for (const socket of over) socket.write('GET /api/v1/models HTTP/1.1\r\nhost: x\r\n\r\n');
      const answers = await within(Promise.all(overClosed), 20_000, 'answering the connections over the cap');
      for (const text of answers) {
        const [head = '', body = ''] = text.split('\r\n\r\n');
        expect(head.split(' ')[1], text).toBe('503');
        expect(head.toLowerCase()).toContain('retry-after: 2');
        expect(head.toLowerCase()).toContain('connection: close');
        expect(JSON.parse(body)).toMatchObject({ code: 503, data: null, error: 'service_unavailable', msg: expect.stringMatching(/at most 5/) });
      }
      // Another address is served meanwhile, and so are the connections under the cap.
      expect(await statusFrom(s.url, '/healthz', '127.0.0.2')).toBe(200);
      const again = new Promise<string>((resolve) => kept[0]!.once('data', (d) => resolve(String(d))));
      kept[0]!.write('GET /healthz HTTP/1.1\r\nhost: x\r\n\r\n');
      expect((await again).split(' ')[1]).toBe('200');
      const after = await cuts();
      expect(after.per_address_cap! - (before.per_address_cap ?? 0)).toBe(CAP);
      expect(after.per_address_cap_reset! - (before.per_address_cap_reset ?? 0)).toBe(1);
      await Promise.all(
        kept.map((socket) => {
          const closed = untilClosed(socket);
          socket.end();
          return closed;
        }),
      );
    });
  });
}
