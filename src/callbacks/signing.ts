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

/**
 * The signature headers of one delivery (DECISIONS §14): Standard Webhooks (`webhook-id`,
 * `webhook-timestamp`, `webhook-signature` over the body) and the older `X-Webhook-*` pair.
 */
export function signatureHeaders(secret: string, webhookId: string, taskId: string, body: string, at: Date): Record<string, string> {
  const timestamp = Math.floor(at.getTime() / 1000);
  return {
    'webhook-id': webhookId,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signer(secret).sign(webhookId, at, body),
    'x-webhook-timestamp': String(timestamp),
    'x-webhook-signature': legacySignature(secret, taskId, timestamp),
  };
}
