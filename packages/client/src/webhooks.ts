/**
 * Verification of GenGate's callback deliveries (docs/callbacks.md) with WebCrypto, so it runs on
 * Node 20 and in browsers and workers alike. Two schemes:
 * - Standard Webhooks: `webhook-signature: v1,<base64 HMAC-SHA256(key, id.timestamp.body)>` (several
 *   space-separated signatures allowed), the key being the secret after `whsec_`, base64-decoded;
 * - the older one: `X-Webhook-Signature: base64(HMAC-SHA256(secret, taskId.timestamp))`, keyed with the
 *   secret text as shown. It does not cover the body, so the Standard scheme is used whenever its
 *   headers are present.
 */
import { GenGateError } from './errors.js';

/** A delivery that is not signed with the secret, or is too old. */
export class WebhookVerificationError extends GenGateError {
  constructor(msg: string) {
    super('webhook_verification_failed', 0, msg);
  }
}

export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

export interface VerifyOptions {
  /** Seconds a timestamp may differ from now (default 300). */
  toleranceSeconds?: number;
  /** Which scheme to accept: `standard`, `legacy`, or `any` (default: Standard when its headers are there, else the older one). */
  scheme?: 'standard' | 'legacy' | 'any';
  /** Now, in milliseconds (for tests). */
  now?: number;
}

/** The body of a delivery (what verifyWebhook returns). */
export interface WebhookPayload {
  code: number;
  msg: string;
  taskId: string;
  data: Record<string, unknown> & { callbackType?: string };
}

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof Headers !== 'undefined' && headers instanceof Headers) return headers.get(name) ?? undefined;
  const h = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(h).find((k) => k.toLowerCase() === name);
  const v = key === undefined ? undefined : h[key];
  return Array.isArray(v) ? v[0] : v;
}

function fromBase64(text: string): Uint8Array {
  const b64 = text.replace(/-/g, '+').replace(/_/g, '/');
  const bin = atob(b64.padEnd(Math.ceil(b64.length / 4) * 4, '='));
  return Uint8Array.from(bin, (c) => c.charCodeAt(0));
}

async function hmac(key: Uint8Array, message: string): Promise<Uint8Array> {
  const k = await crypto.subtle.importKey('raw', key as BufferSource, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  return new Uint8Array(await crypto.subtle.sign('HMAC', k, new TextEncoder().encode(message)));
}

/** Compares without stopping at the first difference. */
function same(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}

function checkFresh(timestamp: string | undefined, o: VerifyOptions): void {
  const ts = Number(timestamp);
  if (!timestamp || !Number.isInteger(ts)) throw new WebhookVerificationError('the delivery has no valid timestamp header');
  const skew = Math.abs((o.now ?? Date.now()) / 1000 - ts);
  if (skew > (o.toleranceSeconds ?? 300)) throw new WebhookVerificationError(`the delivery's timestamp is ${Math.round(skew)} s away from now`);
}

function parse(body: string): WebhookPayload {
  try {
    return JSON.parse(body) as WebhookPayload;
  } catch {
    throw new WebhookVerificationError('the delivery body is not JSON');
  }
}

async function verifyStandard(headers: WebhookHeaders, body: string, secret: string, o: VerifyOptions): Promise<WebhookPayload> {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (!id || !signatures) throw new WebhookVerificationError('the delivery has no webhook-id or webhook-signature header');
  checkFresh(timestamp, o);
  const expected = await hmac(fromBase64(secret.startsWith('whsec_') ? secret.slice(6) : secret), `${id}.${timestamp}.${body}`);
  for (const sig of signatures.split(' ')) {
    const [version, value] = sig.split(',', 2);
    if (version === 'v1' && value && same(fromBase64(value), expected)) return parse(body);
  }
  throw new WebhookVerificationError('no webhook-signature matches the secret');
}

async function verifyLegacy(headers: WebhookHeaders, body: string, secret: string, o: VerifyOptions): Promise<WebhookPayload> {
  const timestamp = header(headers, 'x-webhook-timestamp');
  const signature = header(headers, 'x-webhook-signature');
  if (!signature) throw new WebhookVerificationError('the delivery has no X-Webhook-Signature header');
  checkFresh(timestamp, o);
  const payload = parse(body);
  const expected = await hmac(new TextEncoder().encode(secret), `${payload.taskId}.${timestamp}`);
  if (!same(fromBase64(signature), expected)) throw new WebhookVerificationError('X-Webhook-Signature does not match the secret');
  return payload;
}

/**
 * Verifies a callback delivery against the account's webhook secret (`whsec_...`) and returns its
 * parsed body; throws WebhookVerificationError otherwise. Pass the **raw** body as received.
 */
export async function verifyWebhook(headers: WebhookHeaders, body: string | Uint8Array, secret: string, o: VerifyOptions = {}): Promise<WebhookPayload> {
  const text = typeof body === 'string' ? body : new TextDecoder().decode(body);
  const scheme = o.scheme ?? 'any';
  if (scheme === 'standard' || (scheme === 'any' && header(headers, 'webhook-signature') !== undefined)) return verifyStandard(headers, text, secret, o);
  return verifyLegacy(headers, text, secret, o);
}
