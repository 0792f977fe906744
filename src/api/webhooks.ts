import { z } from 'zod';
import type { KeyedOperation } from './operation.js';
import { readTaskId, recordInfoQuery } from './tasks/record-info.js';
import { parseWith } from '../errors.js';

const Secrets = z.object({
  secret: z.string().describe('The current secret (whsec_...): signs every delivery'),
  previous: z
    .object({ secret: z.string(), validUntil: z.string().describe('ISO time after which it no longer signs') })
    .nullable()
    .describe('For 24 hours after a rotation: the replaced secret, which still signs (a second webhook-signature)'),
});

const AttemptView = z.object({
  id: z.string(),
  kind: z.enum(['delivery', 'retry', 'redeliver', 'event', 'test']).describe('delivery: the first try; retry: a scheduled retry; redeliver: asked for by hand'),
  url: z.string(),
  webhookId: z.string().describe('The webhook-id header sent'),
  at: z.number().describe('Epoch milliseconds of the attempt'),
  ok: z.boolean().describe('The receiver answered 2xx in time'),
  statusCode: z.number().nullable(),
  error: z.string().nullable(),
  durationMs: z.number(),
});

const CallbackState = z
  .object({
    url: z.string(),
    status: z.enum(['pending', 'delivered', 'failed']),
    attempts: z.number(),
    lastAttemptAt: z.number().nullable(),
    lastStatusCode: z.number().nullable(),
    lastError: z.string().nullable(),
    deliveredAt: z.number().nullable(),
  })
  .describe("The Task's `callback`");

export const DeliveryLog = z.object({
  taskId: z.string(),
  callback: CallbackState.nullable().describe('null: the task has no callBackUrl'),
  attempts: z.array(AttemptView).describe('Every attempt, oldest first'),
});

export const testWebhookBody = z.object({ url: z.string().min(1).max(2000).describe('The receiver to send a signed webhook.test event to') }).strict();

/** GET /api/v1/account/webhook-secret */
export const webhookSecret: KeyedOperation = {
  spec: {
    method: 'get',
    path: '/api/v1/account/webhook-secret',
    id: 'getWebhookSecret',
    tag: 'Account',
    auth: 'key',
    scope: 'billing',
    summary: "Reveal the account's webhook secret",
    description:
      'A key with the scope billing, or an owner signed in (billing is a scope of owners: the session of a member and the keys a member makes lack it). During the 24 hours after a rotation the previous secret is shown too.',
    ok: { schema: Secrets, envelope: true, description: 'The secrets' },
  },
  handler:
    (services) =>
    async ({ principal }) => {
      return { data: await services.accounts.webhookSecrets(principal.accountId) };
    },
};

/** POST /api/v1/account/webhook-secret/rotate */
export const rotateWebhookSecret: KeyedOperation = {
  spec: {
    method: 'post',
    path: '/api/v1/account/webhook-secret/rotate',
    id: 'rotateWebhookSecret',
    tag: 'Account',
    auth: 'key',
    scope: 'billing',
    summary: "Rotate the account's webhook secret",
    description:
      'Makes a new secret. For 24 hours deliveries carry two Standard Webhooks signatures (webhook-signature: "v1,<new> v1,<old>"); X-Webhook-Signature is signed with the new secret and X-Webhook-Signature-Previous with the old one. A key with the scope billing, or an owner signed in (billing is a scope of owners: the session of a member and the keys a member makes lack it).',
    ok: { schema: Secrets, envelope: true, description: 'The new secret and the previous one' },
  },
  handler:
    (services) =>
    async ({ principal }) => {
      return { data: await services.accounts.rotateWebhookSecret(principal.accountId) };
    },
};

/** POST /api/v1/account/webhooks/test */
export const testWebhook: KeyedOperation = {
  spec: {
    method: 'post',
    path: '/api/v1/account/webhooks/test',
    id: 'testWebhook',
    tag: 'Account',
    auth: 'key',
    scope: 'tasks:write',
    summary: 'Send a signed test delivery now',
    description:
      'POSTs {type: "webhook.test", id, accountId, at}, signed like every delivery, to the URL once (no retry) and answers what the receiver did. The URL must pass the network guard like a callBackUrl.',
    body: testWebhookBody,
    ok: { schema: AttemptView.extend({ body: z.unknown() }), envelope: true, description: 'The attempt (ok false when the receiver did not answer 2xx)' },
    errors: ['invalid_request'],
  },
  handler:
    (services) =>
    async ({ principal, body }) => ({ data: await services.webhooks.sendTest(principal.accountId, parseWith(testWebhookBody, body, '').url) }),
};

/** GET /api/v1/jobs/callbacks?taskId= */
export const callbackLog: KeyedOperation = {
  spec: {
    method: 'get',
    path: '/api/v1/jobs/callbacks',
    id: 'callbackLog',
    tag: 'Tasks',
    auth: 'key',
    scope: 'tasks:read',
    summary: "A task's callback deliveries: every attempt",
    description: 'Each attempt of the callback (time, HTTP status, error, duration), including retries and redeliveries. 404 for a task of another account.',
    query: recordInfoQuery,
    ok: { schema: DeliveryLog, envelope: true, description: 'The delivery log' },
    errors: ['task_not_found', 'missing_field', 'invalid_request'],
  },
  handler:
    (services) =>
    async ({ principal, query }) => ({ data: await services.webhooks.log(principal.accountId, readTaskId(query, 'rest')) }),
};

/** POST /api/v1/jobs/callbacks/redeliver */
export const redeliverCallback: KeyedOperation = {
  spec: {
    method: 'post',
    path: '/api/v1/jobs/callbacks/redeliver',
    id: 'redeliverCallback',
    tag: 'Tasks',
    auth: 'key',
    scope: 'tasks:write',
    summary: "Send a finished task's callback again, now",
    description:
      'One attempt now, logged as redeliver; success marks the callback delivered. Asked again within 10 s it answers the attempt already made (repeated: true). 409 while a delivery of the task is in flight, for a task not finished yet, or one without callBackUrl.',
    body: recordInfoQuery,
    ok: {
      schema: z.object({ repeated: z.boolean(), attempt: AttemptView, callback: CallbackState }),
      envelope: true,
      description: 'The attempt (ok false when the receiver did not answer 2xx) and the callback state after it',
    },
    errors: ['task_not_found', 'conflict', 'missing_field', 'invalid_request'],
  },
  handler:
    (services) =>
    async ({ principal, body }) => ({ data: await services.webhooks.redeliver(principal.accountId, readTaskId(body, 'body')) }),
};
