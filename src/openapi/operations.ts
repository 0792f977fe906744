import { z } from 'zod';
import type { Scope } from '../accounts/index.js';
import type { Config } from '../config.js';
import type { ErrorKind } from '../errors.js';
import { CALCULATOR_PARAMS } from '../pricing/index.js';
import { adminBodies, idempotencyKey, listQuery, recordInfoQuery } from '../http/requests.js';
import * as S from './schemas.js';

/**
 * Every HTTP operation GenGate serves, in one table: the OpenAPI document is generated from it
 * and a test checks that every route the server registers has an entry. Adding a route means
 * adding its entry here.
 */

export type Tag = 'Tasks' | 'Account' | 'Catalog' | 'Pricing' | 'Files' | 'MCP' | 'Operations' | 'Reference' | 'Admin';

/** One answer: a zod schema (or a named special), whether it is wrapped in the envelope, its media type. */
export interface Reply {
  description: string;
  /** Status of the main answer; 200 unless given. */
  status?: number;
  schema?: z.ZodType | 'models' | 'any';
  envelope?: boolean;
  type?: string;
  headers?: Record<string, string>;
}

export interface Operation {
  method: 'get' | 'post' | 'delete';
  /** The path as registered in Fastify (`:param` style). */
  path: string;
  id: string;
  tag: Tag;
  summary: string;
  description?: string;
  /** key: bearer API key (with `scope`); admin: bearer ADMIN_TOKEN; metrics: bearer METRICS_TOKEN when set. */
  auth?: 'key' | 'admin' | 'metrics';
  scope?: Scope;
  /** Served on PRICING_BASE_URL (its own `servers` entry). */
  host?: 'pricing';
  /** Only registered when this holds (admin API needs ADMIN_TOKEN). */
  when?: (config: Config) => boolean;
  query?: z.ZodObject;
  params?: Record<string, string>;
  headers?: Record<string, z.ZodType>;
  /** 'createTask': one schema per model, selected by `model` (built from the catalog). */
  body?: z.ZodType | 'createTask' | 'jsonrpc' | 'upload';
  ok: Reply;
  /** Envelope errors besides those every operation of its kind has (see document.ts). */
  errors?: ErrorKind[];
  /** Answers that are not envelope errors, by status. */
  extra?: Record<string, Reply>;
}

const adminOn = (c: Config) => c.ADMIN_TOKEN !== undefined;
const env = (schema: z.ZodType, description: string): Reply => ({ schema, envelope: true, description });
const calculatorQuery = z.object(
  Object.fromEntries(
    CALCULATOR_PARAMS.map((p) => {
      const schemas: Record<(typeof CALCULATOR_PARAMS)[number], z.ZodType> = {
        model: z.string().describe('A model id or alias'),
        resolution: z.string().describe('A value of the model\'s resolution field'),
        quality: z.enum(['auto', 'low', 'medium', 'high']),
        duration: z.string().describe('Seconds, or auto / -1 for models with automatic length'),
        generate_audio: z.boolean(),
        reference_images: z.number().int().min(0),
        reference_video_seconds: z.number().min(0).describe('Total seconds of client-supplied video'),
      };
      return [p, p === 'model' ? schemas[p] : schemas[p].optional()];
    }),
  ),
);
const priceRefusal: Reply = { schema: S.PriceRefusal, description: 'Invalid parameters (whatever ERROR_STYLE is)' };
const adminAccount = { id: 'The account id' };

export const OPERATIONS: Operation[] = [
  {
    method: 'post', path: '/api/v1/jobs/createTask', id: 'createTask', tag: 'Tasks', auth: 'key', scope: 'tasks:write',
    summary: 'Create a task',
    description: 'Charges the list price now and returns at once; refunded in full if the task fails. `input` follows the schema of the chosen `model`.',
    headers: { 'Idempotency-Key': idempotencyKey.optional() },
    body: 'createTask',
    ok: env(S.TaskCreated, 'Task created (or the same task again for a repeated Idempotency-Key; header idempotent-replayed: true)'),
    errors: ['invalid_request', 'missing_field', 'unsupported_model', 'content_rejected', 'insufficient_balance', 'model_disabled'],
  },
  {
    method: 'get', path: '/api/v1/jobs/recordInfo', id: 'recordInfo', tag: 'Tasks', auth: 'key', scope: 'tasks:read',
    summary: 'One task', query: recordInfoQuery,
    ok: env(S.Task, 'The task'), errors: ['task_not_found', 'missing_field', 'invalid_request'],
  },
  {
    method: 'get', path: '/api/v1/jobs/list', id: 'listTasks', tag: 'Tasks', auth: 'key', scope: 'tasks:read',
    summary: 'Recent tasks, newest first', query: listQuery,
    ok: env(S.TaskList, 'A page of tasks'), errors: ['invalid_request'],
  },
  {
    method: 'post', path: '/api/v1/files/upload', id: 'upload', tag: 'Files', auth: 'key', scope: 'files:write',
    summary: 'Upload a photo, video or audio file (kept 24 hours)',
    description: 'multipart/form-data with the file in the field `file`. The kind is decided by the bytes: JPG, PNG, WebP photos; MP4, MOV (converted to MP4) videos; MP3, WAV audio; videos and audio at most 30 s.',
    body: 'upload',
    ok: env(S.UploadResult, 'The stored file'),
    errors: ['missing_field', 'upload_rejected', 'invalid_request'],
  },
  {
    method: 'get', path: '/api/v1/user/balance', id: 'balance', tag: 'Account', auth: 'key', scope: 'balance:read',
    summary: 'Balance of the account', ok: env(S.Balance, 'The balance'),
  },
  {
    method: 'get', path: '/api/v1/models', id: 'listModels', tag: 'Catalog', summary: 'The model catalog',
    description: 'Every model with its input schema, prices and media limits; disabled models are listed with enabled false.',
    ok: { schema: 'models', envelope: true, description: 'Every model' },
  },
  {
    method: 'get', path: '/v1/pricing', id: 'priceList', tag: 'Pricing', host: 'pricing', summary: 'The price list (no envelope)',
    ok: { schema: S.PriceList, description: 'All models with their prices and price rules', headers: { ETag: 'Hash of the body', 'Cache-Control': 'public, max-age=300' } },
    extra: { '304': { description: 'If-None-Match matched the ETag' }, '429': { ...priceRefusal, description: 'Rate limited; see Retry-After' } },
  },
  {
    method: 'get', path: '/v1/pricing/calculate', id: 'calculatePrice', tag: 'Pricing', host: 'pricing', summary: 'The exact price of a model and parameters (no envelope)',
    query: calculatorQuery,
    ok: { schema: S.PriceResult, description: 'The price createTask would charge for the same input' },
    extra: { '400': priceRefusal, '429': { ...priceRefusal, description: 'Rate limited; see Retry-After' } },
  },
  {
    method: 'get', path: '/files/:id/:name', id: 'getFile', tag: 'Files', summary: 'A result file (kept 24 hours)',
    description: 'No key: the random id is the secret. Range requests are answered with 206; HEAD works.',
    params: { id: 'Random 128-bit file id', name: 'File name' },
    ok: { schema: 'any', type: 'application/octet-stream', description: 'The file; Content-Type follows its bytes' },
    extra: { '206': { description: 'The requested byte range' }, '416': { description: 'Unsatisfiable range' } },
    errors: ['not_found'],
  },
  {
    method: 'post', path: '/mcp', id: 'mcp', tag: 'MCP', host: 'pricing', summary: 'MCP endpoint (Streamable HTTP, stateless)',
    description: 'JSON-RPC 2.0 messages of the Model Context Protocol. Tools without a key: list_models, get_model, calculate_price, get_price_list; with Authorization: Bearer <API key>: create_task, get_task, wait_for_task, list_tasks, get_balance. See docs/api.md.',
    body: 'jsonrpc',
    ok: { schema: 'any', description: 'A JSON-RPC answer, as application/json or a text/event-stream of messages' },
  },
  {
    method: 'get', path: '/mcp', id: 'mcpStream', tag: 'MCP', host: 'pricing', summary: 'Not supported: the endpoint is stateless',
    ok: { status: 405, schema: 'any', description: 'Method not allowed (JSON-RPC error)' },
  },
  {
    method: 'delete', path: '/mcp', id: 'mcpEnd', tag: 'MCP', host: 'pricing', summary: 'Not supported: the endpoint is stateless',
    ok: { status: 405, schema: 'any', description: 'Method not allowed (JSON-RPC error)' },
  },
  {
    method: 'get', path: '/openapi.json', id: 'openapi', tag: 'Reference', summary: 'This document (OpenAPI 3.1)',
    ok: { schema: 'any', description: 'The OpenAPI document' },
  },
  { method: 'get', path: '/docs', id: 'docsPage', tag: 'Reference', summary: 'The API reference page', ok: { type: 'text/html', description: 'HTML page rendering this document' } },
  {
    method: 'get', path: '/docs/:asset', id: 'docsAsset', tag: 'Reference', summary: 'Scripts and styles of the reference page',
    params: { asset: 'File name' }, ok: { type: 'application/octet-stream', description: 'The file' }, errors: ['not_found'],
  },
  { method: 'get', path: '/healthz', id: 'healthz', tag: 'Operations', summary: 'The process is up', ok: { schema: S.Health, description: 'Up' } },
  {
    method: 'get', path: '/readyz', id: 'readyz', tag: 'Operations', summary: 'The database and the blob store answer',
    ok: { schema: S.Ready, description: 'Ready' }, extra: { '503': { schema: S.Ready, description: 'A check failed; `checks` names it' } },
  },
  {
    method: 'get', path: '/metrics', id: 'metrics', tag: 'Operations', auth: 'metrics', summary: 'Prometheus metrics',
    ok: { type: 'text/plain; version=0.0.4', description: 'Exposition text; see docs/operations.md' },
    extra: { '401': { schema: 'any', description: 'METRICS_TOKEN is set and the bearer token is wrong or missing' } },
  },
  {
    method: 'post', path: '/upstream/v1/notify/:token', id: 'upstreamNotify', tag: 'Operations', summary: 'Completion notice from an upstream backend',
    description: 'The per-task address GenGate gives an upstream provider when UPSTREAM_WEBHOOKS is true (see docs/backends.md). The body (any type, at most 256 KB) is ignored: the notice only makes the task due, and GenGate asks the upstream itself.',
    params: { token: 'Unguessable token of one task' }, ok: env(z.null(), 'Noted'), errors: ['not_found'],
    extra: { '413': { schema: 'any', description: 'The body is larger than 256 KB' } },
  },
  ...adminOperations(),
];

/** The admin API (/admin/v1/*, bearer ADMIN_TOKEN); registered only when ADMIN_TOKEN is set. */
function adminOperations(): Operation[] {
  const base = { tag: 'Admin' as const, auth: 'admin' as const, when: adminOn, errors: ['invalid_request', 'not_found'] as ErrorKind[] };
  return [
    { ...base, method: 'post', path: '/admin/v1/accounts', id: 'adminCreateAccount', summary: 'Create an account and its first key',
      body: adminBodies.createAccount, ok: env(S.AccountCreated, 'The account and its key (shown only here)') },
    { ...base, method: 'get', path: '/admin/v1/accounts', id: 'adminListAccounts', summary: 'All accounts', ok: env(z.array(S.Account), 'Accounts') },
    { ...base, method: 'get', path: '/admin/v1/accounts/:id', id: 'adminGetAccount', summary: 'One account', params: adminAccount, ok: env(S.Account, 'The account') },
    { ...base, method: 'post', path: '/admin/v1/accounts/:id/disable', id: 'adminDisable', summary: 'Disable an account', params: adminAccount, ok: env(S.Account, 'The account') },
    { ...base, method: 'post', path: '/admin/v1/accounts/:id/enable', id: 'adminEnable', summary: 'Enable an account', params: adminAccount, ok: env(S.Account, 'The account') },
    { ...base, method: 'post', path: '/admin/v1/accounts/:id/topup', id: 'adminTopup', summary: 'Top up an account', params: adminAccount,
      body: adminBodies.topup, ok: env(S.Account, 'The account') },
    { ...base, method: 'post', path: '/admin/v1/accounts/:id/limits', id: 'adminLimits', summary: 'Set the account\'s per-key rate limits', params: adminAccount,
      body: adminBodies.limits, ok: env(S.Account, 'The account') },
    { ...base, method: 'post', path: '/admin/v1/accounts/:id/keys', id: 'adminCreateKey', summary: 'Create an API key', params: adminAccount,
      body: adminBodies.createKey, ok: env(S.KeyCreated, 'The key and its secret (shown only here)') },
    { ...base, method: 'get', path: '/admin/v1/accounts/:id/keys', id: 'adminListKeys', summary: 'Keys of an account', params: adminAccount, ok: env(z.array(S.ApiKey), 'Keys (never the secret)') },
    { ...base, method: 'get', path: '/admin/v1/models', id: 'adminListModels', summary: 'Every model with its enabled switch', ok: env(z.array(S.ModelSwitch), 'Models') },
    { ...base, method: 'post', path: '/admin/v1/models/:id/disable', id: 'adminDisableModel', summary: 'Disable a model (createTask answers 505)',
      params: { id: 'Model id or alias, URL-encoded (a slash as %2F)' }, ok: env(S.ModelSwitch, 'The model') },
    { ...base, method: 'post', path: '/admin/v1/models/:id/enable', id: 'adminEnableModel', summary: 'Enable a model',
      params: { id: 'Model id or alias, URL-encoded (a slash as %2F)' }, ok: env(S.ModelSwitch, 'The model') },
    { ...base, method: 'post', path: '/admin/v1/keys/:id/revoke', id: 'adminRevokeKey', summary: 'Revoke a key', params: { id: 'The key id' }, ok: env(S.ApiKey, 'The key') },
    { ...base, method: 'get', path: '/admin/v1/accounts/:id/ledger', id: 'adminLedger', summary: 'Ledger of an account (?format=csv for CSV)', params: adminAccount,
      query: z.object({ format: z.enum(['json', 'csv']).optional() }), ok: env(z.array(S.LedgerEntry), 'Ledger entries, oldest first') },
  ];
}
