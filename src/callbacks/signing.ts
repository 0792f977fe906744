import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { boundedCache, cached } from '../cache.js';

/** The Standard Webhooks secret form (`whsec_` + standard base64) of an account secret; older secrets were base64url. */
function standardSecret(secret: string): string {
  const bare = secret.startsWith('whsec_') ? secret.slice(6) : secret;
  const b64 = bare.replace(/-/g, '+').replace(/_/g, '/');
  return `whsec_${b64.padEnd(Math.ceil(b64.length / 4) * 4, '=')}`;
}

/** Signers by secret: building one decodes the key; a handful of accounts sign most deliveries. */
const signers = boundedCache<string, Webhook>(1000);
function signer(secret: string): Webhook {
  return cached(signers, secret, () => new Webhook(standardSecret(secret)));
}

/** The older scheme: base64(HMAC-SHA256(secret, taskId + "." + timestamp)), keyed with the secret string exactly as shown to the operator. */
export function legacySignature(secret: string, taskId: string, timestampSeconds: number): string {
  return createHmac('sha256', secret).update(`${taskId}.${timestampSeconds}`).digest('base64');
}

/** The secrets that sign a delivery: the account's current one and, for 24 h after a rotation, the one it replaced. */
export interface SigningKeys {
  secret: string;
  previous: string | null;
}

/**
 * The signature headers of one delivery (DECISIONS §14): Standard Webhooks (`webhook-id`,
 * `webhook-timestamp`, `webhook-signature` over the body) and the older `X-Webhook-*` pair.
 * During a rotation's overlap `webhook-signature` carries both signatures (`v1,<new> v1,<old>`),
 * the older pair is signed with the new secret and `X-Webhook-Signature-Previous` adds the old
 * one's (decision 1905). `subject` is the task id (an account event's id for events).
 */
export function signatureHeaders(keys: SigningKeys, webhookId: string, subject: string, body: string, at: Date): Record<string, string> {
  const timestamp = Math.floor(at.getTime() / 1000);
  const standard = signer(keys.secret).sign(webhookId, at, body);
  const headers: Record<string, string> = {
    'webhook-id': webhookId,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': keys.previous ? `${standard} ${signer(keys.previous).sign(webhookId, at, body)}` : standard,
    'x-webhook-timestamp': String(timestamp),
    'x-webhook-signature': legacySignature(keys.secret, subject, timestamp),
  };
  if (keys.previous) headers['x-webhook-signature-previous'] = legacySignature(keys.previous, subject, timestamp);
  return headers;
}
