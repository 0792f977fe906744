import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyBaseLogger } from 'fastify';
import type { CutReason } from '../metrics/index.js';

/** A connection whose answer waits on its client: bytes handed to the kernel and the clock when the current window began. */
interface Outflow {
  sent: number;
  since: number;
}

/** Node's own counters of a TCP socket: bytes handed to libuv, and of those the ones libuv still holds. Both are Node internals, read-only here. */
type Counted = Socket & { _bytesDispatched?: number; _handle?: { writeQueueSize?: number } | null };

/**
 * Bytes of this connection that have left the process (the kernel took them). Node's public
 * `bytesWritten - writableLength` moves only when a whole chunk is written: with a 64 KB file chunk
 * a client reading 2 KB/s would show no progress for 32 s. libuv's write queue moves byte by byte.
 */
export function sentBytes(socket: Socket): number {
  const s = socket as Counted;
  const queued = s._handle?.writeQueueSize;
  if (typeof s._bytesDispatched === 'number' && typeof queued === 'number') return s._bytesDispatched - queued;
  return socket.bytesWritten - socket.writableLength;
}

/**
 * Cuts a connection whose client reads the answer slower than `rate` bytes per second over a
 * window of `window` ms (decision 0315): a client that asks for a 200 MB file and reads nothing
 * would otherwise hold the socket, the open file and the buffers forever, and keep a graceful
 * shutdown waiting. Only time in which the answer waited on the client counts: a window starts
 * when a check finds unsent bytes queued on the socket and ends early when a check finds none (the
 * app, not the client, was the slow side then, e.g. an event stream with nothing to say). Every
 * connection is looked at by one timer, four times per window; nothing is added per request.
 */
export function minimumReadRate(
  server: Server,
  opts: { rate: number; window: number },
  log: FastifyBaseLogger,
  cut: (reason: CutReason, count?: number) => void,
): void {
  const { rate, window } = opts;
  // Every open connection; the value is set while its answer waits on the client.
  const open = new Map<Socket, Outflow | null>();
  server.on('connection', (socket: Socket) => {
    open.set(socket, null);
    socket.once('close', () => open.delete(socket));
  });
  const every = Math.max(25, Math.min(1_000, Math.floor(window / 4)));
  let last = Date.now();
  const check = () => {
    const now = Date.now();
    // A check that comes late means the process itself stalled (a long GC pause, a blocked loop): it
    // handed nothing to the kernel meanwhile, so the time counts against no client.
    const stalled = now - last > 2 * every;
    last = now;
    for (const [socket, f] of open) {
      if (socket.destroyed || socket.writableLength === 0) {
        if (f) open.set(socket, null);
        continue;
      }
      const sent = sentBytes(socket);
      if (!f || stalled) {
        open.set(socket, { sent, since: now });
        continue;
      }
      if (now - f.since < window) continue;
      const bytes = sent - f.sent;
      if (bytes < (rate * (now - f.since)) / 1000) {
        open.delete(socket);
        log.info({ address: socket.remoteAddress, bytes, ms: now - f.since, unsent: socket.writableLength }, 'response read too slowly');
        cut('slow_response_read');
        // Headers and part of the body are out: no answer can follow, only the close. The reply's
        // stream (an open file) is destroyed by Fastify when the response closes.
        socket.destroy();
        continue;
      }
      f.sent = sent;
      f.since = now;
    }
  };
  server.once('listening', () => {
    last = Date.now();
    const timer = setInterval(check, every);
    timer.unref();
    server.once('close', () => clearInterval(timer));
  });
}
