import { z } from 'zod';
import { ADMIN_OPERATIONS } from './admin.js';
import { AUTH_OPERATIONS } from './auth/index.js';
import { balance } from './balance.js';
import type { KeyedOperation, Operation, Reply } from './operation.js';
import { calculatorParams } from './pricing.js';
import * as S from './schemas.js';
import { sunoRecordInfo } from './kie/generate-record-info.js';
import { sunoGenerate } from './kie/generate.js';
import { cancelTask } from './tasks/cancel-task.js';
import { createTask } from './tasks/create-task.js';
import { listTasks } from './tasks/list-tasks.js';
import { CONSOLE_OPERATIONS } from './console.js';
import { createTopup, listTopups } from './payments.js';
import { recordInfo } from './tasks/record-info.js';
import { usage } from './usage.js';
import { chatCredit } from './kie/credit.js';
import { downloadUrl } from './kie/download-url.js';
import { KIE_UPLOADS } from './kie/uploads.js';
import { OAUTH_OPERATIONS } from './oauth.js';
import { createKey, getAccount, listKeys, revokeKey, updateKey } from './keys.js';
import { callbackLog, redeliverCallback, rotateWebhookSecret, testWebhook, webhookSecret } from './webhooks.js';
import { getAlert, setAlert } from './alerts.js';

/**
 * Every HTTP operation GenGate serves, in one table: the OpenAPI document is generated from it
 * and a test checks that every route the server registers has an entry. Adding a route means
 * adding its entry here (operations with a handler keep their spec in their own module).
 */

const env = (schema: z.ZodType, description: string): Reply => ({ schema, envelope: true, description });
const priceRefusal: Reply = { schema: S.PriceRefusal, description: 'Invalid parameters (whatever ERROR_STYLE is)' };

/** The operations with a handler, served to an API key by REST (http/ mounts them). */
export const KEYED_OPERATIONS: KeyedOperation[] = [
  createTask,
  recordInfo,
  listTasks,
  cancelTask,
  balance,
  sunoGenerate,
  sunoRecordInfo,
  chatCredit,
  downloadUrl,
  createTopup,
  listTopups,
  getAccount,
  listKeys,
  createKey,
  updateKey,
  revokeKey,
  usage,
  callbackLog,
  redeliverCallback,
  webhookSecret,
  rotateWebhookSecret,
  testWebhook,
  getAlert,
  setAlert,
];

/** Every operation, in the order of the OpenAPI document. */
export const OPERATIONS: Operation[] = [
  createTask.spec,
  recordInfo.spec,
  listTasks.spec,
  cancelTask.spec,
  callbackLog.spec,
  redeliverCallback.spec,
  {
    method: 'post',
    path: '/api/v1/files/upload',
    id: 'upload',
    tag: 'Files',
    auth: 'key',
    scope: 'files:write',
    summary: 'Upload a photo, video or audio file (kept 24 hours)',
    description:
      'multipart/form-data with the file in the field `file`. The kind is decided by the bytes: JPG, PNG, WebP photos; MP4, MOV (converted to MP4) videos; MP3, WAV audio; videos and audio at most 30 s.',
    body: 'upload',
    ok: env(S.UploadResult, 'The stored file'),
    errors: ['missing_field', 'upload_rejected', 'invalid_request'],
  },
  balance.spec,
  getAccount.spec,
  listKeys.spec,
  createKey.spec,
  updateKey.spec,
  revokeKey.spec,
  usage.spec,
  getAlert.spec,
  setAlert.spec,
  webhookSecret.spec,
  rotateWebhookSecret.spec,
  testWebhook.spec,
  {
    method: 'get',
    path: '/api/v1/models',
    id: 'listModels',
    tag: 'Catalog',
    summary: 'The model catalog',
    description: 'Every model with its input schema, prices and media limits; disabled models are listed with enabled false.',
    ok: { schema: 'models', envelope: true, description: 'Every model' },
  },
  {
    method: 'get',
    path: '/v1/pricing',
    id: 'priceList',
    tag: 'Pricing',
    host: 'pricing',
    summary: 'The price list (no envelope)',
    ok: {
      schema: S.PriceList,
      description: 'All models with their prices and price rules',
      headers: { ETag: 'Hash of the body', 'Cache-Control': 'public, max-age=300' },
    },
    extra: { '304': { description: 'If-None-Match matched the ETag' }, '429': { ...priceRefusal, description: 'Rate limited; see Retry-After' } },
  },
  {
    method: 'get',
    path: '/v1/pricing/calculate',
    id: 'calculatePrice',
    tag: 'Pricing',
    host: 'pricing',
    summary: 'The exact price of a model and parameters (no envelope)',
    query: calculatorParams,
    ok: { schema: S.PriceResult, description: 'The price createTask would charge for the same input' },
    extra: { '400': priceRefusal, '429': { ...priceRefusal, description: 'Rate limited; see Retry-After' } },
  },
  {
    method: 'get',
    path: '/files/:id/:name',
    id: 'getFile',
    tag: 'Files',
    summary: 'A result file (kept 24 hours)',
    description: 'No key: the random id is the secret. Range requests are answered with 206; HEAD works.',
    params: { id: 'Random 128-bit file id', name: 'File name' },
    ok: { schema: 'any', type: 'application/octet-stream', description: 'The file; Content-Type follows its bytes' },
    extra: { '206': { description: 'The requested byte range' }, '416': { description: 'Unsatisfiable range' } },
    errors: ['not_found'],
  },
  {
    method: 'get',
    path: '/files/dl/:token/:name',
    id: 'getDownload',
    tag: 'Files',
    summary: 'A file through a download link of POST /api/v1/common/download-url (works 20 minutes)',
    description:
      'No key: the sealed token names the file and when the link stops working. Answers like /files/{id}/{name}; 404 once the link or the file expired.',
    params: { token: 'Sealed file id and expiry', name: 'File name' },
    ok: { schema: 'any', type: 'application/octet-stream', description: 'The file; Content-Type follows its bytes' },
    extra: { '206': { description: 'The requested byte range' }, '416': { description: 'Unsatisfiable range' } },
    errors: ['not_found'],
  },
  chatCredit.spec,
  ...KIE_UPLOADS,
  downloadUrl.spec,
  {
    method: 'post',
    path: '/mcp',
    id: 'mcp',
    tag: 'MCP',
    host: 'pricing',
    summary: 'MCP endpoint (Streamable HTTP, stateless)',
    description:
      "JSON-RPC 2.0 messages of the Model Context Protocol. Without a credential: list_models, get_model, calculate_price, get_price_list. With Authorization: Bearer <API key or OAuth access token> also the tools the credential's scopes allow: upload_file, create_task, get_task, wait_for_task, list_tasks, cancel_task, get_balance. See docs/mcp.md.",
    body: 'jsonrpc',
    ok: { schema: 'any', description: 'A JSON-RPC answer, as application/json or a text/event-stream of messages' },
    extra: {
      '401': {
        schema: 'any',
        description: 'An invalid, expired or revoked credential: WWW-Authenticate: Bearer resource_metadata="..." points to the OAuth metadata',
      },
    },
  },
  {
    method: 'post',
    path: '/mcp/agent',
    id: 'mcpAgent',
    tag: 'MCP',
    host: 'pricing',
    summary: 'MCP for agents that sign in with OAuth (a credential is required)',
    description:
      'The tools of /mcp, with a credential only: without one the answer is 401 with WWW-Authenticate: Bearer resource_metadata="{PRICING_BASE_URL}/.well-known/oauth-protected-resource/mcp/agent", which starts an MCP client\'s OAuth sign-in (the MCP authorization specification). See docs/mcp.md.',
    body: 'jsonrpc',
    ok: { schema: 'any', description: 'A JSON-RPC answer, as application/json or a text/event-stream of messages' },
    extra: { '401': { schema: 'any', description: 'No credential, or an invalid, expired or revoked one; WWW-Authenticate points to the OAuth metadata' } },
  },
  {
    method: 'post',
    path: '/mcp/public',
    id: 'mcpPublic',
    tag: 'MCP',
    host: 'pricing',
    summary: 'MCP without a key: the public tools only (models and prices)',
    description: 'Like /mcp without a credential: list_models, get_model, calculate_price, get_price_list. Any Authorization header is ignored.',
    body: 'jsonrpc',
    ok: { schema: 'any', description: 'A JSON-RPC answer, as application/json or a text/event-stream of messages' },
  },
  {
    method: 'get',
    path: '/mcp',
    id: 'mcpStream',
    tag: 'MCP',
    host: 'pricing',
    summary: 'Not supported: the endpoint is stateless',
    ok: { status: 405, schema: 'any', description: 'Method not allowed (JSON-RPC error)' },
  },
  {
    method: 'delete',
    path: '/mcp',
    id: 'mcpEnd',
    tag: 'MCP',
    host: 'pricing',
    summary: 'Not supported: the endpoint is stateless',
    ok: { status: 405, schema: 'any', description: 'Method not allowed (JSON-RPC error)' },
  },
  {
    method: 'get',
    path: '/openapi.json',
    id: 'openapi',
    tag: 'Reference',
    summary: 'This document (OpenAPI 3.1)',
    ok: { schema: 'any', description: 'The OpenAPI document' },
  },
  {
    method: 'get',
    path: '/model-definition.schema.json',
    id: 'modelDefinitionSchema',
    tag: 'Reference',
    summary: 'The JSON Schema of the model definition format (docs/models.md)',
    ok: { schema: 'any', description: 'JSON Schema (draft 2020-12) of a model definition' },
  },
  {
    method: 'get',
    path: '/docs',
    id: 'docsPage',
    tag: 'Reference',
    summary: 'The API reference page',
    ok: { type: 'text/html', description: 'HTML page rendering this document' },
  },
  {
    method: 'get',
    path: '/docs/:asset',
    id: 'docsAsset',
    tag: 'Reference',
    summary: 'Scripts and styles of the reference page',
    params: { asset: 'File name' },
    ok: { type: 'application/octet-stream', description: 'The file' },
    errors: ['not_found'],
  },
  { method: 'get', path: '/healthz', id: 'healthz', tag: 'Operations', summary: 'The process is up', ok: { schema: S.Health, description: 'Up' } },
  {
    method: 'get',
    path: '/readyz',
    id: 'readyz',
    tag: 'Operations',
    summary: 'The database and the blob store answer, ffmpeg and ffprobe run',
    ok: { schema: S.Ready, description: 'Ready' },
    extra: { '503': { schema: S.Ready, description: 'A check failed; `checks` names it' } },
  },
  {
    method: 'get',
    path: '/metrics',
    id: 'metrics',
    tag: 'Operations',
    auth: 'metrics',
    summary: 'Prometheus metrics',
    ok: { type: 'text/plain; version=0.0.4', description: 'Exposition text; see docs/operations.md' },
    extra: { '401': { schema: 'any', description: 'METRICS_TOKEN is set and the bearer token is wrong or missing' } },
  },
  {
    method: 'post',
    path: '/upstream/v1/notify/:token',
    id: 'upstreamNotify',
    tag: 'Operations',
    summary: 'Completion notice from an upstream backend',
    description:
      'The per-task address GenGate gives an upstream provider when UPSTREAM_WEBHOOKS is true (see docs/backends.md). The body (any type, at most 256 KB) is ignored: the notice only makes the task due, and GenGate asks the upstream itself.',
    params: { token: 'Unguessable token of one task' },
    ok: env(z.null(), 'Noted'),
    errors: ['not_found'],
    extra: { '413': { schema: 'any', description: 'The body is larger than 256 KB' } },
  },
  sunoGenerate.spec,
  sunoRecordInfo.spec,
  ...AUTH_OPERATIONS.map((op) => op.spec),
  createTopup.spec,
  listTopups.spec,
  ...CONSOLE_OPERATIONS,
  {
    method: 'get',
    path: '/topup/success',
    id: 'topupSuccessPage',
    tag: 'Payments',
    summary: 'Where Stripe Checkout sends the payer after paying; it credits nothing (the webhook does)',
    ok: { type: 'text/html', description: 'HTML page' },
  },
  {
    method: 'get',
    path: '/topup/cancel',
    id: 'topupCancelPage',
    tag: 'Payments',
    summary: 'Where Stripe Checkout sends a payer who did not pay',
    ok: { type: 'text/html', description: 'HTML page' },
  },
  {
    method: 'post',
    path: '/stripe/webhook',
    id: 'stripeWebhook',
    tag: 'Payments',
    summary: "Stripe's signed events (registered when STRIPE_SECRET_KEY is set)",
    description:
      'The endpoint to register in Stripe for checkout.session.completed, checkout.session.async_payment_succeeded, checkout.session.expired, charge.refunded, charge.dispute.created and charge.dispute.funds_reinstated. The raw body is verified against the Stripe-Signature header with STRIPE_WEBHOOK_SECRET; each event is applied exactly once. See docs/payments.md.',
    when: (c) => !!c.STRIPE_SECRET_KEY,
    body: z.unknown(),
    ok: { schema: z.object({ received: z.literal(true), outcome: z.string() }), description: 'Received (whatever it changed)' },
    extra: { '400': { schema: 'any', description: 'The signature does not verify (forged, altered or older than 5 minutes); nothing written' } },
  },
  ...OAUTH_OPERATIONS,
  ...ADMIN_OPERATIONS.map((op) => op.spec),
];
