import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { IncomingHttpHeaders } from 'node:http';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { NetError, type NetGuard } from '../../net/index.js';
import { NotAccepted } from './types.js';

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

/** One JSON call to an upstream API. */
export interface JsonRequest {
  readonly headers?: Readonly<Record<string, string>>;
  /** Sent as JSON when present. */
  readonly body?: unknown;
  readonly timeoutMs?: number;
  readonly maxBytes?: number;
}

/** An upstream's answer: `data` is the parsed JSON body, undefined when the body is not JSON (`text` keeps it). */
export interface JsonResponse {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly data: unknown;
  readonly text: string;
}

/** A file to send as multipart/form-data. */
export interface UploadRequest {
  /** Form field of the file; default "file". */
  readonly field?: string;
  readonly filename?: string;
  readonly mime?: string;
  /** Extra text fields, sent before the file. */
  readonly fields?: Readonly<Record<string, string>>;
  readonly headers?: Readonly<Record<string, string>>;
  readonly timeoutMs?: number;
}

/** Limits of one result download. */
export interface DownloadRequest {
  readonly maxBytes?: number;
  readonly timeoutMs?: number;
  readonly headers?: Readonly<Record<string, string>>;
}

/** Defaults of UpstreamHttp. */
export interface UpstreamHttpOptions {
  /** Deadline of one API call; default 30 s. */
  readonly timeoutMs?: number;
  /** Largest result file; default 1 GB. */
  readonly downloadMaxBytes?: number;
  /** Deadline of one result download, connect to last byte; default 10 minutes. */
  readonly downloadTimeoutMs?: number;
  /** Deadline of one upload; default 10 minutes. */
  readonly uploadTimeoutMs?: number;
  /**
   * The guard for links a customer gave (`downloadGiven`): without the trusted upstream hosts, so a
   * customer's photo link cannot reach a private address an upstream route may (decision 2502).
   * Default: the upstream guard.
   */
  readonly givenGuard?: NetGuard;
}

/** Statuses of a create call that mean the job was not taken and another try (here or on the next route) is safe. */
const NOT_TAKEN = new Set([401, 402, 403, 404, 408, 425, 429]);

/**
 * HTTP for upstream adapters, all through the network guard (DECISIONS §14): JSON calls with
 * deadlines, the classification of a create call, multipart uploads and streamed downloads of results.
 */
export class UpstreamHttp {
  private readonly timeoutMs: number;
  private readonly downloadMaxBytes: number;
  private readonly downloadTimeoutMs: number;
  private readonly uploadTimeoutMs: number;
  private readonly givenGuard: NetGuard;

  constructor(
    private readonly guard: NetGuard,
    options: UpstreamHttpOptions = {},
  ) {
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.downloadMaxBytes = options.downloadMaxBytes ?? 1024 * 1024 * 1024;
    this.downloadTimeoutMs = options.downloadTimeoutMs ?? 600_000;
    this.uploadTimeoutMs = options.uploadTimeoutMs ?? 600_000;
    this.givenGuard = options.givenGuard ?? guard;
  }

  /** One JSON call; non-2xx answers are returned, network failures throw NetError. */
  async json(method: Method, url: string, req: JsonRequest = {}): Promise<JsonResponse> {
    const headers: Record<string, string> = { accept: 'application/json', ...req.headers };
    let body: string | undefined;
    if (req.body !== undefined) {
      body = JSON.stringify(req.body);
      headers['content-type'] ??= 'application/json';
    }
    const res = await this.guard.fetch(url, {
      method,
      headers,
      ...(body === undefined ? {} : { body }),
      timeoutMs: req.timeoutMs ?? this.timeoutMs,
      maxBytes: req.maxBytes ?? 10 * 1024 * 1024,
    });
    return parsed(res.status, res.headers, res.body.toString('utf8'));
  }

  /**
   * The call that hands a job over. Throws NotAccepted when the upstream did not take it and trying
   * again is safe (network failure, 429 with its Retry-After, 5xx, refused credentials, unknown
   * model); returns any other answer for the adapter to read.
   */
  async create(method: Method, url: string, req: JsonRequest = {}): Promise<JsonResponse> {
    let res: JsonResponse;
    try {
      res = await this.json(method, url, req);
    } catch (e) {
      // The address without its query: a query may carry a secret (fal's webhook address holds GenGate's notify token).
      if (e instanceof NetError) throw new NotAccepted(`${withoutQuery(url)}: ${e.message}`);
      throw e;
    }
    const refusal = notAccepted(res);
    if (refusal) throw refusal;
    return res;
  }

  /**
   * Where a websocket to an upstream connects through the guard: `url` (http or https) checked as
   * for `json` and turned into its ws: or wss: address, and the `createConnection` to give the
   * client library (absent when private addresses are allowed). Throws NetError for an address the
   * guard refuses.
   */
  socketTarget(url: string): { url: URL; createConnection?: ReturnType<NetGuard['connector']> } {
    const u = new URL(this.guard.parse(url));
    const secure = u.protocol === 'https:';
    u.protocol = secure ? 'wss:' : 'ws:';
    const createConnection = this.guard.connector(secure);
    return { url: u, ...(createConnection ? { createConnection } : {}) };
  }

  /** Sends a local file as multipart/form-data, streamed from disk; answers like json(). */
  async upload(url: string, file: string, req: UploadRequest = {}): Promise<JsonResponse> {
    const boundary = `----gengate${Math.random().toString(16).slice(2)}${Date.now().toString(16)}`;
    const parts = Object.entries(req.fields ?? {}).map(
      ([name, value]) => `--${boundary}\r\ncontent-disposition: form-data; name="${quoted(name)}"\r\n\r\n${value}\r\n`,
    );
    const filename = req.filename ?? path.basename(file);
    const head = Buffer.from(
      `${parts.join('')}--${boundary}\r\ncontent-disposition: form-data; name="${quoted(req.field ?? 'file')}"; filename="${quoted(filename)}"\r\n` +
        `content-type: ${req.mime ?? 'application/octet-stream'}\r\n\r\n`,
    );
    const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
    const size = (await stat(file)).size;
    const body = new PassThrough();
    body.write(head);
    const source = createReadStream(file);
    source.on('error', (e) => body.destroy(e));
    source.on('end', () => body.end(tail));
    source.pipe(body, { end: false });
    try {
      const res = await this.guard.fetch(url, {
        method: 'POST',
        headers: {
          accept: 'application/json',
          ...req.headers,
          'content-type': `multipart/form-data; boundary=${boundary}`,
          'content-length': String(head.length + size + tail.length),
        },
        body,
        timeoutMs: req.timeoutMs ?? this.uploadTimeoutMs,
      });
      return parsed(res.status, res.headers, res.body.toString('utf8'));
    } finally {
      // A refused or failed request leaves the file half read: close it rather than wait for the collector.
      source.destroy();
      body.destroy();
    }
  }

  /** Streams a result file to `dest` through the guard (size and time limits, partial file removed on error); returns its size and declared type. */
  async download(url: string, dest: string, req: DownloadRequest = {}): Promise<{ bytes: number; mime?: string }> {
    return this.save(this.guard, url, dest, req);
  }

  /** `download` of a link a customer gave (a photo of the input): through the customers' guard, never a trusted upstream host's private address. */
  downloadGiven(url: string, dest: string, req: DownloadRequest = {}): Promise<{ bytes: number; mime?: string }> {
    return this.save(this.givenGuard, url, dest, req);
  }

  private async save(guard: NetGuard, url: string, dest: string, req: DownloadRequest): Promise<{ bytes: number; mime?: string }> {
    const res = await guard.download(url, dest, {
      maxBytes: req.maxBytes ?? this.downloadMaxBytes,
      timeoutMs: req.timeoutMs ?? this.downloadTimeoutMs,
      ...(req.headers ? { headers: { ...req.headers } } : {}),
    });
    const type = res.headers['content-type']?.split(';')[0]?.trim();
    return { bytes: res.bytes, ...(type ? { mime: type } : {}) };
  }
}

/** NotAccepted for an answer to a create call that means "not taken, try again or elsewhere", else null. */
export function notAccepted(res: JsonResponse, now = Date.now()): NotAccepted | null {
  if (res.status < 500 && !NOT_TAKEN.has(res.status)) return null;
  const retryAfter = retryAfterMs(res.headers['retry-after'], now);
  return new NotAccepted(`upstream answered HTTP ${res.status}${detail(res)}`, retryAfter);
}

/** Retry-After as milliseconds from now (seconds or an HTTP date); undefined when absent or unreadable. */
export function retryAfterMs(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  if (v === undefined || v.trim() === '') return undefined;
  if (/^\s*\d+(\.\d+)?\s*$/.test(v)) return Math.round(Number(v) * 1000);
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** A short excerpt of an answer's body for messages (never the whole body). */
export function detail(res: JsonResponse): string {
  const text = res.text.trim();
  return text ? `: ${text.length > 300 ? `${text.slice(0, 300)}…` : text}` : '';
}

function parsed(status: number, headers: IncomingHttpHeaders, text: string): JsonResponse {
  let data: unknown;
  try {
    data = text ? JSON.parse(text) : undefined;
  } catch {
    data = undefined;
  }
  return { status, headers, data, text };
}

function withoutQuery(url: string): string {
  const q = url.search(/[?#]/);
  return q < 0 ? url : url.slice(0, q);
}

/** Form names and file names may not break out of their quotes. */
function quoted(s: string): string {
  return s.replace(/["\r\n\\]/g, '_');
}
