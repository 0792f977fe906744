import { AbortedError, ConnectionError, GenGateError, RateLimitError, errorFor } from './errors.js';

/** How the client talks to one GenGate: addresses, key, retry policy and the fetch to use. */
export interface Transport {
  apiKey: string | undefined;
  /** The server's root, without a trailing slash and without /api/v1. */
  baseUrl: string;
  /** Where /v1/pricing lives (PRICING_BASE_URL), by default baseUrl. */
  pricingBaseUrl: string;
  /** Retries of a request answered 429, 5xx (not 505) or not at all. */
  maxRetries: number;
  fetch: typeof fetch;
}

export interface RequestOptions {
  method?: 'GET' | 'POST';
  query?: Record<string, string | number | boolean | undefined>;
  /** JSON body, or a body the caller built (FormData, a stream maker). */
  json?: unknown;
  body?: () => BodyInit;
  headers?: Record<string, string>;
  signal?: AbortSignal;
  /** The pricing host answers without the envelope. */
  pricing?: boolean;
  /** false: one attempt only (a streamed body cannot be sent twice). */
  retry?: boolean;
}

export interface Answer<T> {
  data: T;
  headers: Headers;
}

/** Waits `ms`, or rejects with AbortedError when the signal fires first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(aborted());
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(aborted());
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

export function aborted(): AbortedError {
  return new AbortedError('aborted', 0, 'the request was aborted by its AbortSignal');
}

/** `Retry-After` in milliseconds (seconds or an HTTP date), null when absent. */
export function retryAfterMs(headers: Headers): number | null {
  const v = headers.get('retry-after');
  if (v === null) return null;
  const seconds = Number(v);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const at = Date.parse(v);
  return Number.isNaN(at) ? null : Math.max(0, at - Date.now());
}

/** The wait before retry `attempt` (1, 2, ...): the server's Retry-After when it gave one, else exponential backoff with jitter. */
function backoff(attempt: number, headers: Headers | null): number {
  const told = headers ? retryAfterMs(headers) : null;
  if (told !== null) return told;
  return Math.min(8000, 250 * 2 ** (attempt - 1)) * (0.5 + Math.random() / 2);
}

const retryable = (status: number) => status === 429 || (status >= 500 && status !== 505 && status !== 501);

/**
 * One API call: builds the URL, sends the key, decodes the envelope (or the pricing host's body) and
 * throws the error class of a refusal. Retries 429 (after Retry-After), 5xx and connection failures
 * up to `maxRetries` times; the caller makes a POST safe to repeat (createTask's Idempotency-Key).
 */
export async function request<T>(t: Transport, path: string, o: RequestOptions = {}): Promise<Answer<T>> {
  const url = new URL((o.pricing ? t.pricingBaseUrl : t.baseUrl) + path);
  for (const [k, v] of Object.entries(o.query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
  const headers: Record<string, string> = { accept: 'application/json', ...o.headers };
  if (t.apiKey && !o.pricing) headers.authorization = `Bearer ${t.apiKey}`;
  if (o.json !== undefined) headers['content-type'] = 'application/json';
  const attempts = o.retry === false ? 1 : t.maxRetries + 1;
  for (let attempt = 1; ; attempt++) {
    if (o.signal?.aborted) throw aborted();
    let res: Response;
    try {
      const body = o.json !== undefined ? JSON.stringify(o.json) : o.body?.();
      const init: RequestInit & { duplex?: 'half' } = { method: o.method ?? 'GET', headers, body, signal: o.signal };
      if (body instanceof ReadableStream) init.duplex = 'half';
      res = await t.fetch(url, init);
    } catch (e) {
      if (o.signal?.aborted) throw aborted();
      if (attempt < attempts) {
        await sleep(backoff(attempt, null), o.signal);
        continue;
      }
      throw new ConnectionError(
        'connection_error',
        0,
        `could not reach ${url.origin}: ${e instanceof Error ? (e.cause instanceof Error ? e.cause.message : e.message) : String(e)}`,
      );
    }
    if (res.ok) return { data: (await decode(res, o.pricing)) as T, headers: res.headers };
    if (retryable(res.status) && attempt < attempts) {
      await res.body?.cancel().catch(() => {});
      await sleep(backoff(attempt, res.headers), o.signal);
      continue;
    }
    throw await refusal(res, o.pricing);
  }
}

async function decode(res: Response, pricing = false): Promise<unknown> {
  const body = (await res.json()) as { data?: unknown };
  return pricing ? body : body.data;
}

/** The error of a refused request, from the envelope (`error`, `msg`, `data`) or the pricing host's `{ok: false, error: {code, message}}`. */
async function refusal(res: Response, pricing = false): Promise<GenGateError> {
  const requestId = res.headers.get('x-request-id');
  const text = await res.text().catch(() => '');
  let body: Record<string, unknown> = {};
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    /* not JSON: the status decides */
  }
  let e: GenGateError;
  if (pricing && typeof body.error === 'object' && body.error !== null) {
    const err = body.error as { code?: string; message?: string };
    e = errorFor(err.code, res.status, err.message ?? text, requestId);
  } else {
    const msg = typeof body.msg === 'string' ? body.msg : text.slice(0, 300) || res.statusText;
    e = errorFor(typeof body.error === 'string' ? body.error : undefined, res.status, msg, requestId, body.data ?? null);
  }
  if (e instanceof RateLimitError) {
    const ms = retryAfterMs(res.headers);
    e.retryAfterSeconds = ms === null ? null : Math.ceil(ms / 1000);
  }
  return e;
}
