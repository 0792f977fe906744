import dns from 'node:dns';
import { createWriteStream, type WriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import http, { type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import https from 'node:https';
import net, { isIP, type NetConnectOpts, type Socket } from 'node:net';
import tls, { type ConnectionOptions } from 'node:tls';
import { Readable } from 'node:stream';
import { isBlockedAddress } from './address.js';
import { NetError, checkPeer, guardedLookup, hostKey, networkMessage } from './checks.js';

export { NetError, type NetErrorCode } from './checks.js';

/** Settings of the guard: the ALLOW_PRIVATE_NETWORK switch and the default limits. */
export interface NetGuardOptions {
  allowPrivate: boolean;
  /**
   * Host names and IP literals (as in a URL, without port) that may be on private addresses even
   * with `allowPrivate` off: the operator's trusted upstreams (a route's `private_network`,
   * UPSTREAM_PRIVATE_HOSTS; decision 2502). Any other host stays guarded.
   */
  privateHosts?: Iterable<string>;
  /** Whole-request deadline (connect to last byte); default 10 s. */
  timeoutMs?: number;
  /** Largest response body read; default 10 MB. */
  maxBytes?: number;
}

/** One outbound request. Redirects are not followed unless `maxRedirects` > 0 (each hop is checked again). */
export interface FetchOptions {
  method?: 'GET' | 'POST' | 'HEAD' | 'PUT' | 'DELETE';
  headers?: Record<string, string>;
  /** A stream is piped as the request body (set content-length yourself). */
  body?: string | Buffer | Readable;
  timeoutMs?: number;
  maxBytes?: number;
  maxRedirects?: number;
}

/** The answer: status, headers and the whole (size-limited) body. */
export interface FetchResult {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** The URL that answered (differs from the asked one after followed redirects). */
  url: string;
}

/**
 * The one door for every URL GenGate itself fetches (callbacks, photos for the content check,
 * backends' result links): http(s) only, no private addresses unless allowed, a deadline and a
 * size limit, keep-alive connections.
 */
export class NetGuard {
  private readonly agents = {
    'http:': new http.Agent({ keepAlive: true, maxSockets: 256 }),
    'https:': new https.Agent({ keepAlive: true, maxSockets: 256 }),
  };
  readonly allowPrivate: boolean;
  /** Hosts allowed on private addresses (lower case, IPv6 without brackets). */
  readonly privateHosts: ReadonlySet<string>;
  private readonly timeoutMs: number;
  private readonly maxBytes: number;

  constructor(options: NetGuardOptions) {
    this.allowPrivate = options.allowPrivate;
    this.privateHosts = new Set([...(options.privateHosts ?? [])].map(hostKey));
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.maxBytes = options.maxBytes ?? 10 * 1024 * 1024;
  }

  /** Parses and checks a URL without connecting: http(s), and a literal address must not be blocked. Throws NetError. */
  parse(url: string): URL {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      throw new NetError('bad_url', `${url} is not a valid URL`);
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new NetError('bad_url', `${u.protocol} URLs are not fetched; use http:// or https://`);
    if (u.username || u.password) throw new NetError('bad_url', 'URLs with a user name or password are not fetched');
    const host = u.hostname.replace(/^\[|\]$/g, '');
    if (!this.privateOk(host) && isIP(host) && isBlockedAddress(host)) {
      throw new NetError('blocked', `${host} is a private, loopback, link-local or metadata address`);
    }
    return u;
  }

  /** Checks a URL now, resolving its name: throws NetError `blocked` when it reaches only blocked addresses. DNS failures pass (checked again when connecting). */
  async check(url: string): Promise<void> {
    const u = this.parse(url);
    const host = u.hostname.replace(/^\[|\]$/g, '');
    if (this.privateOk(host) || isIP(host)) return;
    const addresses = await dns.promises.lookup(host, { all: true }).catch(() => null);
    if (addresses && addresses.length > 0 && addresses.every((a) => isBlockedAddress(a.address))) {
      throw new NetError('blocked', `${host} resolves to ${addresses.map((a) => a.address).join(', ')}, a private, loopback, link-local or metadata address`);
    }
  }

  /** Sends one request through the guard; throws NetError on refusal, timeout, oversize or network failure. Non-2xx answers are returned, not thrown. */
  async fetch(url: string, options: FetchOptions = {}): Promise<FetchResult> {
    let current = url;
    for (let hop = 0; ; hop++) {
      const res = await this.once(current, options);
      const location = res.headers.location;
      if (res.status < 300 || res.status > 399 || !location || hop >= (options.maxRedirects ?? 0)) return res;
      current = new URL(location, current).toString();
    }
  }

  /**
   * Streams a GET answer into `dest` through the guard: the same connect-time address checks, a
   * whole-transfer deadline and a size limit. Follows up to `maxRedirects` (default 3) redirects,
   * each checked again. A non-2xx answer throws NetError 'network' with its status; on any
   * failure the partial file is removed.
   */
  async download(url: string, dest: string, options: Omit<FetchOptions, 'method' | 'body'> = {}): Promise<DownloadResult> {
    let current = url;
    let hopOptions = options;
    const maxRedirects = options.maxRedirects ?? 3;
    for (let hop = 0; ; hop++) {
      const res = await this.saveOnce(current, dest, hopOptions, hop < maxRedirects);
      if (res.redirect === undefined) return { bytes: res.bytes, headers: res.headers, url: current };
      const next = new URL(res.redirect, current);
      // Headers (a credential, say) go on only to the same origin.
      if (next.origin !== new URL(current).origin) hopOptions = { ...hopOptions, headers: {} };
      current = next.toString();
    }
  }

  /**
   * For a long-lived connection that a client library opens itself (a websocket): the function to
   * give it as its `createConnection` option, so the connection gets the checks of `fetch` (DNS
   * answers that are blocked addresses dropped, a socket whose peer is one destroyed before anything
   * is sent). Undefined when private addresses are allowed (nothing to check). Check the URL with
   * `parse` first: a literal blocked address never gets this far.
   */
  connector(secure: boolean): ((options: NetConnectOpts & ConnectionOptions) => Socket) | undefined {
    if (this.allowPrivate) return undefined;
    return (options) => {
      const host = typeof options.host === 'string' ? options.host : '';
      if (this.privateOk(host))
        return secure ? tls.connect({ ...options, path: undefined } as ConnectionOptions) : net.connect({ ...options, path: undefined } as NetConnectOpts);
      // `path` is the request's path here (http.request passes its options on), not a Unix socket.
      const socket = secure
        ? tls.connect({ ...options, path: undefined, lookup: guardedLookup, servername: options.servername ?? (isIP(host) ? '' : host) })
        : net.connect({ ...options, path: undefined, lookup: guardedLookup } as NetConnectOpts);
      checkPeer(socket, (e) => socket.destroy(e instanceof Error ? e : new Error(String(e))));
      return socket;
    };
  }

  /** Whether `host` (a URL's host name or IP literal) may be on a private address: ALLOW_PRIVATE_NETWORK, or a trusted upstream host. */
  privateOk(host: string): boolean {
    return this.allowPrivate || this.privateHosts.has(hostKey(host));
  }

  /** Closes idle keep-alive connections. */
  close(): void {
    this.agents['http:'].destroy();
    this.agents['https:'].destroy();
  }

  private once(url: string, options: FetchOptions): Promise<FetchResult> {
    const maxBytes = options.maxBytes ?? this.maxBytes;
    return this.send<FetchResult>(url, options, (res, u, settle) => {
      const declared = Number(res.headers['content-length'] ?? 0);
      if (declared > maxBytes) return settle.fail(new NetError('too_large', `the answer is ${declared} bytes, more than the limit of ${maxBytes}`));
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > maxBytes) return settle.fail(new NetError('too_large', `the answer is more than the limit of ${maxBytes} bytes`));
        chunks.push(chunk);
      });
      res.on('error', settle.fail);
      res.on('end', () => settle.ok({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks), url: u.toString() }));
    });
  }

  /** One GET written to a file; a followable redirect is returned instead of saved. */
  private async saveOnce(url: string, dest: string, options: FetchOptions, follow: boolean): Promise<Saved> {
    const maxBytes = options.maxBytes ?? this.maxBytes;
    let file: WriteStream | undefined;
    try {
      return await this.send<Saved>(url, { ...options, method: 'GET' }, (res, _u, settle) => {
        const status = res.statusCode ?? 0;
        if (status >= 300 && status <= 399 && res.headers.location && follow) {
          res.resume();
          return settle.ok({ bytes: 0, headers: res.headers, redirect: res.headers.location });
        }
        if (status < 200 || status > 299) {
          res.resume();
          return settle.fail(new NetError('network', `the server answered HTTP ${status}`, status));
        }
        const declared = Number(res.headers['content-length'] ?? 0);
        if (declared > maxBytes) return settle.fail(new NetError('too_large', `the file is ${declared} bytes, more than the limit of ${maxBytes}`));
        const out = createWriteStream(dest);
        file = out;
        let size = 0;
        out.on('error', settle.fail);
        res.on('error', settle.fail);
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > maxBytes) return settle.fail(new NetError('too_large', `the file is more than the limit of ${maxBytes} bytes`));
          // Back-pressure: a slow disk pauses the socket instead of buffering the file in memory.
          if (!out.write(chunk)) {
            res.pause();
            out.once('drain', () => res.resume());
          }
        });
        res.on('end', () => out.end(() => settle.ok({ bytes: size, headers: res.headers })));
      });
    } catch (e) {
      const out = file as WriteStream | undefined;
      if (out && !out.closed) await new Promise<void>((resolve) => out.destroy().once('close', () => resolve()));
      if (out) await rm(dest, { force: true });
      throw e;
    }
  }

  /** Opens one request through the guard; `handle` reads the response and settles once (the deadline covers the whole exchange). */
  private send<T>(url: string, options: FetchOptions, handle: (res: IncomingMessage, u: URL, settle: Settle<T>) => void): Promise<T> {
    const u = this.parse(url);
    const timeoutMs = options.timeoutMs ?? this.timeoutMs;
    const protocol = u.protocol as 'http:' | 'https:';
    const open = this.privateOk(u.hostname);
    return new Promise<T>((resolve, reject) => {
      let settled = false;
      const request = (protocol === 'https:' ? https : http).request(u, {
        method: options.method ?? 'GET',
        headers: options.headers,
        agent: this.agents[protocol],
        ...(open ? {} : { lookup: guardedLookup }),
      });
      const settle: Settle<T> = {
        ok: (value) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          resolve(value);
        },
        fail: (e) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          request.destroy();
          reject(e instanceof NetError ? e : new NetError('network', networkMessage(e)));
        },
      };
      const timer = setTimeout(() => settle.fail(new NetError('timeout', `no complete answer within ${timeoutMs} ms`)), timeoutMs);
      request.on('error', settle.fail);
      if (!open) request.on('socket', (socket: Socket) => checkPeer(socket, settle.fail));
      request.on('response', (res) => handle(res, u, settle));
      const body = options.body;
      if (body instanceof Readable) {
        body.on('error', settle.fail);
        body.pipe(request);
      } else request.end(body);
    });
  }
}

/** What a finished download wrote. */
export interface DownloadResult {
  bytes: number;
  headers: IncomingHttpHeaders;
  /** The URL the file came from (after followed redirects). */
  url: string;
}

interface Saved {
  bytes: number;
  headers: IncomingHttpHeaders;
  redirect?: string;
}

interface Settle<T> {
  ok(value: T): void;
  fail(e: unknown): void;
}
