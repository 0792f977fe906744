import { z } from 'zod';
import { parametersSchema, type Catalog } from '../catalog/index.js';
import type { Config } from '../config.js';
import { ERROR_TABLE, type ErrorKind, type ErrorStyle } from '../errors.js';
import { acceptedInput } from './accepted.js';
import { API_DOC_VERSION, callBackUrl, jsonSchema, OPERATIONS, ReplySchemas as S, type Operation, type Reply } from '../api/index.js';

type Json = Record<string, unknown>;

const NAMES = new Map<z.ZodType, string>(Object.entries(S).map(([name, schema]) => [schema as z.ZodType, name]));
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
/** A component name for a model id: characters OpenAPI does not allow in names (the vendor slash) become `_`. */
const safe = (id: string) => id.replace(/[^A-Za-z0-9._-]/g, '_');

/** Fastify's `/files/:id/:name` as OpenAPI's `/files/{id}/{name}`. */
export function openApiPath(path: string): string {
  return path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

/** Envelope errors an operation can answer: its own plus those of its kind of authentication. */
function errorKinds(op: Operation): ErrorKind[] {
  const kinds = new Set<ErrorKind>(op.errors ?? []);
  if (op.auth === 'key') ['unauthenticated', 'forbidden', 'rate_limited'].forEach((k) => kinds.add(k as ErrorKind));
  if (op.auth === 'admin') kinds.add('unauthenticated');
  if (op.auth === 'session') ['unauthenticated', 'forbidden'].forEach((k) => kinds.add(k as ErrorKind));
  if (op.path === '/api/v1/models') kinds.add('rate_limited');
  if (!['Operations', 'Reference', 'MCP', 'Console', 'OAuth'].includes(op.tag)) kinds.add('internal');
  return [...kinds];
}

function content(reply: Reply): Json | undefined {
  if (!reply.schema && !reply.type) return undefined;
  let schema: Json = {};
  if (reply.schema === 'models') schema = { type: 'array', items: ref('ModelEntry') };
  else if (reply.schema && reply.schema !== 'any') schema = NAMES.has(reply.schema) ? ref(NAMES.get(reply.schema)!) : jsonSchema(reply.schema, 'output');
  if (reply.envelope) schema = { allOf: [ref('Envelope'), { type: 'object', properties: { data: schema } }] };
  return { [reply.type ?? 'application/json']: { schema } };
}

function response(reply: Reply): Json {
  const out: Json = { description: reply.description };
  const body = content(reply);
  if (body) out.content = body;
  if (reply.headers) out.headers = Object.fromEntries(Object.entries(reply.headers).map(([h, d]) => [h, { description: d, schema: { type: 'string' } }]));
  return out;
}

/** One response per error status, `error` limited to the identifiers of this operation under `style`. */
function errorResponses(op: Operation, style: ErrorStyle): Json {
  const byStatus = new Map<number, Set<string>>();
  for (const kind of errorKinds(op)) {
    const [status, type] = ERROR_TABLE[kind][style];
    byStatus.set(status, (byStatus.get(status) ?? new Set()).add(type));
  }
  const out: Json = {};
  for (const [status, types] of [...byStatus].sort(([a], [b]) => a - b)) {
    const schema = {
      allOf: [
        ref('ErrorEnvelope'),
        {
          type: 'object',
          properties: { code: { const: status }, error: { enum: [...types] }, data: status === 402 ? ref('PaymentRequired') : { type: 'null' } },
        },
      ],
    };
    const headers: Json = { 'x-request-id': { $ref: '#/components/headers/RequestId' } };
    if (status === 429) headers['Retry-After'] = { description: 'Seconds to wait', schema: { type: 'integer', minimum: 1 } };
    out[String(status)] = { description: [...types].join(', '), headers, content: { 'application/json': { schema } } };
  }
  return out;
}

function parameters(op: Operation): Json[] {
  const list: Json[] = [];
  for (const [name, description] of Object.entries(op.params ?? {})) list.push({ name, in: 'path', required: true, description, schema: { type: 'string' } });
  if (op.query) {
    const shape = jsonSchema(op.query, 'output').properties as Record<string, Json>;
    const required = (jsonSchema(op.query, 'input').required as string[] | undefined) ?? [];
    for (const [name, schema] of Object.entries(shape)) {
      const { description, ...rest } = schema;
      list.push({ name, in: 'query', required: required.includes(name), ...(description ? { description } : {}), schema: rest });
    }
  }
  for (const [name, schema] of Object.entries(op.headers ?? {})) {
    const { description, ...rest } = jsonSchema(schema, 'input');
    list.push({ name, in: 'header', required: !schema.safeParse(undefined).success ? true : false, ...(description ? { description } : {}), schema: rest });
  }
  return list;
}

function requestBody(op: Operation): Json | undefined {
  if (!op.body) return undefined;
  let schema: Json;
  if (op.body === 'createTask') schema = ref('CreateTaskBody');
  else if (op.body === 'jsonrpc')
    schema = { type: 'object', description: 'A JSON-RPC 2.0 message (or a batch)', properties: { jsonrpc: { const: '2.0' }, method: { type: 'string' } } };
  else if (op.body === 'upload') {
    const file = {
      type: 'object',
      required: ['file'],
      properties: { file: { type: 'string', contentMediaType: 'application/octet-stream', description: 'The file' } },
    };
    return { required: true, content: { 'multipart/form-data': { schema: file } } };
  } else schema = jsonSchema(op.body, 'input');
  return { required: true, content: { [op.bodyType ?? 'application/json']: { schema } } };
}

function operation(op: Operation, style: ErrorStyle): Json {
  const out: Json = { operationId: op.id, tags: [op.tag], summary: op.summary };
  if (op.description) out.description = op.description;
  if (op.auth === 'key') out.security = [{ apiKey: [] }, { sessionCookie: [] }];
  if (op.auth === 'admin') out.security = [{ adminToken: [] }, { sessionCookie: [] }];
  if (op.auth === 'session') out.security = [{ sessionCookie: [] }];
  if (op.auth === 'metrics') out.security = [{ metricsToken: [] }, {}];
  if (op.scope) out.description = `${op.description ? `${op.description} ` : ''}Needs the key scope \`${op.scope}\`.`;
  const params = parameters(op);
  if (params.length) out.parameters = params;
  const body = requestBody(op);
  if (body) out.requestBody = body;
  const extra = Object.fromEntries(Object.entries(op.extra ?? {}).map(([status, reply]) => [status, response(reply)]));
  out.responses = { [String(op.ok.status ?? 200)]: response(op.ok), ...extra, ...errorResponses(op, style) };
  return out;
}

/** The createTask body: one schema per model, selected by `model` (ids and aliases). */
function createTaskSchemas(catalog: Catalog): Json {
  const schemas: Json = {};
  const mapping: Record<string, string> = {};
  const branches: Json[] = [];
  for (const model of catalog.models) {
    const name = safe(model.id);
    const { $schema: _drop, ...input } = acceptedInput(parametersSchema(model));
    schemas[`Input.${name}`] = { ...input, description: `input of ${model.id}: ${model.summary}` };
    schemas[`CreateTask.${name}`] = {
      type: 'object',
      required: ['model', 'input'],
      additionalProperties: false,
      properties: {
        model: { type: 'string', enum: [model.id, ...model.aliases] },
        input: ref(`Input.${name}`),
        callBackUrl: jsonSchema(callBackUrl, 'input'),
      },
    };
    for (const id of [model.id, ...model.aliases]) mapping[id] = `#/components/schemas/CreateTask.${name}`;
    branches.push(ref(`CreateTask.${name}`));
  }
  schemas.CreateTaskBody = { oneOf: branches, discriminator: { propertyName: 'model', mapping } };
  return schemas;
}

/** Builds the OpenAPI 3.1 document of this server (its addresses, error style and catalog). */
export function buildDocument(config: Config, catalog: Catalog): Json {
  const paths: Record<string, Json> = {};
  for (const op of OPERATIONS) {
    if (op.when && !op.when(config)) continue;
    const item = (paths[openApiPath(op.path)] ??= {});
    if (op.host === 'pricing') item.servers = [{ url: config.PRICING_BASE_URL, description: 'Pricing host (PRICING_BASE_URL)' }];
    item[op.method] = operation(op, config.ERROR_STYLE);
  }
  const named = Object.fromEntries(Object.entries(S).map(([name, schema]) => [name, jsonSchema(schema as z.ZodType, 'output')]));
  const envelopeNote =
    config.ERROR_STYLE === 'default' ? 'model-documentation identifiers (ERROR_STYLE=default)' : 'endpoint-reference identifiers (ERROR_STYLE=reference)';
  return {
    openapi: '3.1.0',
    info: {
      title: 'GenGate API',
      version: API_DOC_VERSION,
      description: `Pay-per-run generation of images, video and music. Every /api/v1 answer is an envelope {code, msg, data} (plus error on errors) whose code equals the HTTP status; every answer carries x-request-id. Error identifiers here are the ${envelopeNote}.`,
    },
    servers: [{ url: config.PUBLIC_BASE_URL, description: 'API (PUBLIC_BASE_URL)' }],
    tags: [
      'Tasks',
      'Account',
      'Auth',
      'Catalog',
      'Pricing',
      'Files',
      'MCP',
      'OAuth',
      'Payments',
      'Reference',
      'Console',
      'Operations',
      'Admin',
      'kie.ai compatibility',
    ].map((name) => ({
      name,
    })),
    paths,
    components: {
      securitySchemes: {
        apiKey: { type: 'http', scheme: 'bearer', description: 'API key: Authorization: Bearer gg_...' },
        adminToken: { type: 'http', scheme: 'bearer', description: 'ADMIN_TOKEN of the server' },
        metricsToken: { type: 'http', scheme: 'bearer', description: 'METRICS_TOKEN of the server, when set' },
        sessionCookie: {
          type: 'apiKey',
          in: 'cookie',
          name: 'gg_session',
          description:
            "Session cookie set by POST /api/v1/auth/signin (HttpOnly, SameSite=Lax). Every POST made with it must send the header x-csrf-token with the csrfToken of the session (403 otherwise). Admin operations take an operator's session.",
        },
      },
      headers: { RequestId: { description: 'Request id; quote it when reporting a problem', schema: { type: 'string' } } },
      schemas: {
        Envelope: { type: 'object', required: ['code', 'msg', 'data'], properties: { code: { const: 200 }, msg: { const: 'success' }, data: {} } },
        ErrorEnvelope: {
          type: 'object',
          required: ['code', 'msg', 'data', 'error'],
          properties: {
            code: { type: 'integer' },
            msg: { type: 'string', description: 'Names the field, what is allowed and what was received' },
            data: { description: 'null, except on 402' },
            error: { type: 'string' },
          },
        },
        ...named,
        ...createTaskSchemas(catalog),
      },
    },
  };
}
