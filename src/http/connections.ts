import { STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { isIPv6, type Socket } from 'node:net';
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../config.js';
import { statusOf, type ErrorKind, type ErrorStyle } from '../errors.js';
import { failure } from '../api/index.js';
import type { CutReason } from '../metrics/index.js';
import { minimumReadRate } from './read-rate.js';

/** The settings that guard the HTTP server against slow and hoarding clients (decision 0310). */
export type ConnectionSettings = Pick<
  Config,
  | 'ERROR_STYLE'
  | 'HTTP_HEADERS_TIMEOUT_MS'
  | 'HTTP_REQUEST_TIMEOUT_MS'
  | 'HTTP_KEEP_ALIVE_TIMEOUT_MS'
  | 'HTTP_BODY_MIN_BYTES_PER_SECOND'
  | 'HTTP_BODY_RATE_WINDOW_MS'
  | 'HTTP_MAX_CONNECTIONS_PER_ADDRESS'
  | 'HTTP_RESPONSE_MIN_BYTES_PER_SECOND'
>;

/** Counts a connection the server cut itself (the metric gengate_http_connections_cut_total). */
export type CountCut = (reason: CutReason, count?: number) => void;

/**
 * Answers on a raw socket (no reply object exists: the request never reached Fastify, or is cut
 * under it) with the envelope, then closes the connection. Like Node's own answer to a client
 * error, nothing is written once a response has started: half an answer followed by another
 * would corrupt what the client reads.
 */
function answerAndClose(socket: Socket, response: ServerResponse | null | undefined, style: ErrorStyle, kind: ErrorKind, msg: string): void {
  if (socket.writable && !response?.headersSent) {
    const [status, type] = statusOf(kind, style);
    const body = JSON.stringify(failure(status, type, msg));
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\n` +
        `cache-control: no-store\r\nconnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}

/**
 * Fastify's clientErrorHandler: Node's header and request timeouts and unparsable requests get
 * the envelope (408, 431 or 400) instead of Fastify's own JSON, and the connection is closed.
 */
export function clientErrorHandler(settings: ConnectionSettings) {
  const seconds = (ms: number) => `${Math.round(ms / 100) / 10} s`;
  const whole = settings.HTTP_REQUEST_TIMEOUT_MS ? ` and the whole request within ${seconds(settings.HTTP_REQUEST_TIMEOUT_MS)}` : '';
  const late = `the request did not arrive in time: its headers must arrive within ${seconds(settings.HTTP_HEADERS_TIMEOUT_MS)}${whole}; the connection is closed`;
  return function onClientError(this: { log: FastifyBaseLogger }, err: Error & { code?: string }, socket: Socket): void {
    // A reset connection has nobody left to answer.
    if (err.code === 'ECONNRESET' || socket.destroyed) return;
    // Node keeps the response in progress on the socket; writing after it has started would corrupt it.
    const response = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
    if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
      this.log.info({ address: socket.remoteAddress }, 'request timed out');
      answerAndClose(socket, response, settings.ERROR_STYLE, 'request_timeout', late);
    } else if (err.code === 'HPE_HEADER_OVERFLOW') {
      answerAndClose(socket, response, settings.ERROR_STYLE, 'headers_too_large', 'the request headers are too large (at most 16 KB in all)');
    } else {
      this.log.debug({ err: { code: err.code } }, 'unparsable request');
      answerAndClose(socket, response, settings.ERROR_STYLE, 'invalid_request', 'the request is not valid HTTP/1.1');
    }
  };
}

/**
 * The key connections are counted under: an IPv4 address as it is, an IPv6 address by the /64
 * it is in (one host usually holds a whole /64, so counting single addresses would not cap it).
 */
export function addressKey(address: string | undefined): string {
  if (!address) return 'unknown';
  if (address.startsWith('::ffff:') && address.includes('.')) return address.slice(7);
  if (!isIPv6(address)) return address;
  const bare = address.split('%')[0]!;
  const [head, tail] = bare.includes('::') ? bare.split('::') : [bare, undefined];
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  // An embedded IPv4 tail (::1.2.3.4) fills two groups.
  const width = (parts: string[]) => parts.reduce((n, p) => n + (p.includes('.') ? 2 : 1), 0);
  const groups = [...left, ...Array<string>(Math.max(0, 8 - width(left) - width(right))).fill('0'), ...right];
  return `${groups
    .slice(0, 4)
    .map((g) => parseInt(g, 16).toString(16))
    .join(':')}::/64`;
}

/** The request on a connection whose body is still arriving, measured in windows of HTTP_BODY_RATE_WINDOW_MS. */
interface Inflow {
  req: IncomingMessage;
  res: ServerResponse;
  /** socket.bytesRead and the clock when the current window began. */
  mark: number;
  since: number;
  /** The app held unread body bytes at some check of this window: the slowness was ours. */
  ours: boolean;
}

/**
 * Guards the Node server under a Fastify app: header, request and keep-alive timeouts, a minimum
 * transfer rate for request bodies (decision 0310) and for responses (decision 0315), and a cap on
 * open connections per client address. Call before listen: Node reads the timeout check interval
 * when it starts listening.
 */
export function guardConnections(server: Server, settings: ConnectionSettings, log: FastifyBaseLogger, cut: CountCut = () => {}): void {
  server.headersTimeout = settings.HTTP_HEADERS_TIMEOUT_MS;
  server.requestTimeout = settings.HTTP_REQUEST_TIMEOUT_MS;
  server.keepAliveTimeout = settings.HTTP_KEEP_ALIVE_TIMEOUT_MS;
  // Node checks those two timeouts every 30 s by default, which let a slow request live 30 s past them.
  const shortest = Math.min(settings.HTTP_HEADERS_TIMEOUT_MS, settings.HTTP_REQUEST_TIMEOUT_MS || Infinity);
  (server as Server & { connectionsCheckingInterval: number }).connectionsCheckingInterval = Math.max(25, Math.min(1_000, Math.floor(shortest / 4)));
  if (settings.HTTP_MAX_CONNECTIONS_PER_ADDRESS > 0) capPerAddress(server, settings.HTTP_MAX_CONNECTIONS_PER_ADDRESS, log, cut);
  if (settings.HTTP_BODY_MIN_BYTES_PER_SECOND > 0) minimumBodyRate(server, settings, log, cut);
  if (settings.HTTP_RESPONSE_MIN_BYTES_PER_SECOND > 0)
    minimumReadRate(server, { rate: settings.HTTP_RESPONSE_MIN_BYTES_PER_SECOND, window: settings.HTTP_BODY_RATE_WINDOW_MS }, log, cut);
}

/** How long a client refused by the per-address cap is asked to wait before it tries again. */
export const CAP_RETRY_AFTER_SECONDS = 2;

/**
 * Caps open connections per client address, so one client cannot use up the process's open files
 * (idle keep-alive connections count). A connection over the cap is not reset: its first request
 * is answered 503 with Retry-After and the connection closed (issue 39 finding 12; decision 2304),
 * counted as `per_address_cap`. Those answered connections are capped too, at as many again: past
 * twice the cap a new connection is closed at once, counted as `per_address_cap_reset`, so a flood
 * still cannot hoard files. The address is the socket's: behind a proxy that is the proxy's
 * (docs/operations.md).
 */
function capPerAddress(server: Server, cap: number, log: FastifyBaseLogger, cut: CountCut): void {
  const open = new Map<string, { count: number; over: number; refused: number }>();
  const refused = new WeakSet<Socket>();
  server.on('connection', (socket: Socket) => {
    const key = addressKey(socket.remoteAddress);
    let entry = open.get(key);
    if (!entry) open.set(key, (entry = { count: 0, over: 0, refused: 0 }));
    const e = entry;
    if (e.count >= cap) {
      // One line per flood (the entry lives while the address holds connections), not one per refusal.
      if (e.refused++ === 0)
        log.warn({ address: key, open: e.count }, `connections refused: the address holds ${cap} open connections (HTTP_MAX_CONNECTIONS_PER_ADDRESS)`);
      if (e.over >= cap) {
        cut('per_address_cap_reset');
        socket.destroy();
        return;
      }
      e.over++;
      refused.add(socket);
      socket.once('close', () => {
        if (--e.over === 0 && e.count === 0) open.delete(key);
      });
      return;
    }
    e.count++;
    socket.once('close', () => {
      if (--e.count === 0 && e.over === 0) open.delete(key);
    });
  });
  const msg = `too many open connections from this address (at most ${cap}); retry after ${CAP_RETRY_AFTER_SECONDS} s, or reuse a keep-alive connection`;
  const body = JSON.stringify(failure(503, 'service_unavailable', msg));
  // The app's own handler (Fastify's) runs only for connections under the cap.
  const handlers = server.listeners('request') as Array<(req: IncomingMessage, res: ServerResponse) => void>;
  server.removeAllListeners('request');
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    if (!refused.has(req.socket)) {
      for (const handle of handlers) handle.call(server, req, res);
      return;
    }
    cut('per_address_cap');
    res.writeHead(503, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(body),
      'retry-after': String(CAP_RETRY_AFTER_SECONDS),
      'cache-control': 'no-store',
      connection: 'close',
    });
    res.end(body);
  });
}

/**
 * Cuts a request whose body arrives slower than HTTP_BODY_MIN_BYTES_PER_SECOND over a window of
 * HTTP_BODY_RATE_WINDOW_MS: a flat timeout long enough for an honest 200 MB upload on a slow link
 * would let a trickling body hold its connection for as long. A window in which the app itself
 * held unread bytes (it was busy, or writing to a slow disk) does not count against the client.
 */
function minimumBodyRate(server: Server, settings: ConnectionSettings, log: FastifyBaseLogger, cut: CountCut): void {
  const window = settings.HTTP_BODY_RATE_WINDOW_MS;
  const rate = settings.HTTP_BODY_MIN_BYTES_PER_SECOND;
  const msg = `the request body arrived too slowly: at least ${rate} bytes per second are needed; the connection is closed`;
  // One entry per connection, reused by its next request: keeping every request until the next
  // check (a Set of requests) cost ~8 µs per request with a body in GC at 20k req/s (measured).
  const inflows = new Map<Socket, Inflow>();
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const length = req.headers['content-length'];
    if (length === undefined ? req.headers['transfer-encoding'] === undefined : length === '0') return;
    const socket = req.socket;
    const f = inflows.get(socket);
    if (!f) return void inflows.set(socket, { req, res, mark: socket.bytesRead, since: Date.now(), ours: false });
    f.req = req;
    f.res = res;
    f.mark = socket.bytesRead;
    f.since = Date.now();
    f.ours = false;
  });
  const check = () => {
    const now = Date.now();
    for (const [socket, f] of inflows) {
      if (f.req.complete || socket.destroyed) {
        inflows.delete(socket);
        continue;
      }
      if (f.req.readableLength > 0) f.ours = true;
      if (now - f.since < window) continue;
      const bytes = socket.bytesRead - f.mark;
      if (!f.ours && bytes < (rate * (now - f.since)) / 1000) {
        inflows.delete(socket);
        log.info({ address: socket.remoteAddress, bytes, ms: now - f.since }, 'request body too slow');
        cut('slow_request_body');
        answerAndClose(socket, f.res, settings.ERROR_STYLE, 'request_timeout', msg);
        continue;
      }
      f.mark = socket.bytesRead;
      f.since = now;
      f.ours = false;
    }
  };
  // Started with the server, so an app that is built but never listens (app.inject) leaves no timer behind.
  server.once('listening', () => {
    const timer = setInterval(check, Math.max(25, Math.min(1_000, Math.floor(window / 4))));
    timer.unref();
    server.once('close', () => clearInterval(timer));
  });
}
