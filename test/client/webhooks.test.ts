import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyWebhook, WebhookVerificationError } from '../../packages/client/src/index.js';
import { startReceiver } from '../callbacks/receiver.js';
import { eventually } from '../tasks/support.js';
import { sdk, startPublicServer } from './support.js';

describe('verifyWebhook against a real delivery', () => {
  let s: Awaited<ReturnType<typeof startPublicServer>>;
  let r: Awaited<ReturnType<typeof startReceiver>>;
  beforeAll(async () => {
    r = await startReceiver(() => 200);
    s = await startPublicServer('sqlite');
  });
  afterAll(async () => {
    await s.close();
    await r.close();
  });

  it('accepts both schemes with the account secret and refuses a wrong secret, a tampered body and a stale delivery', async () => {
    const a = await s.account(1);
    const secret = await s.services.accounts.webhookSecret(a.id);
    const { taskId } = await sdk(s, a.key).tasks.create('nano-banana-2', { prompt: 'a cat' }, { callBackUrl: `${r.url}/hook` });
    await eventually(() => r.received.length > 0, 15_000, 'a delivery');
    const { headers, body } = r.received[0]!;
    expect(headers['webhook-signature']).toMatch(/^v1,/);

    const payload = await verifyWebhook(headers, body, secret);
    expect(payload).toMatchObject({ code: 200, taskId, data: { state: 'success', callbackType: 'task_completed' } });
    // The same through a fetch Headers object, raw bytes, and each scheme on its own.
    expect(await verifyWebhook(new Headers(headers as Record<string, string>), new TextEncoder().encode(body), secret)).toEqual(payload);
    expect(await verifyWebhook(headers, body, secret, { scheme: 'standard' })).toEqual(payload);
    const legacyOnly = { 'x-webhook-timestamp': headers['x-webhook-timestamp'], 'x-webhook-signature': headers['x-webhook-signature'] };
    expect(await verifyWebhook(legacyOnly, body, secret)).toEqual(payload);
    // Several Standard signatures, space-separated (a rotated secret): one matching is enough.
    const rotated = { ...headers, 'webhook-signature': `v1,${btoa('x'.repeat(32))} ${headers['webhook-signature']}` };
    expect(await verifyWebhook(rotated, body, secret)).toEqual(payload);

    const refused = (p: Promise<unknown>) => expect(p).rejects.toBeInstanceOf(WebhookVerificationError);
    await refused(verifyWebhook(headers, body, 'whsec_' + btoa('another secret of 32 bytes......')));
    await refused(verifyWebhook(legacyOnly, body, 'whsec_other'));
    await refused(verifyWebhook(headers, body.replace('"success"', '"fail"'), secret));
    await refused(verifyWebhook(legacyOnly, body.replace(taskId, 'tk_someoneelse'), secret));
    await refused(verifyWebhook(headers, body, secret, { now: Date.now() + 3_600_000 }));
    await refused(verifyWebhook({}, body, secret));
  });
});
