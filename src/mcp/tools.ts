import type { Principal, Scope } from '../accounts/index.js';
import { findModel, modelEntry } from '../catalog/index.js';
import {
  balanceView,
  calculatorParams,
  callBackUrl,
  idempotencyKey,
  jsonSchema,
  listQuery,
  parseListQuery,
  readIdempotencyKey,
  readTaskId,
  recordInfoQuery,
  uploadFromBase64,
  uploadFromUrl,
} from '../api/index.js';
import { Errors } from '../errors.js';
import { calculatePrice, priceList } from '../pricing/index.js';
import type { Services } from '../services.js';
import { resultMedia } from './media.js';
import { waitForTask, WAIT_DEFAULT_SECONDS, WAIT_MAX_SECONDS } from './wait.js';

type Json = Record<string, unknown>;

/** A tool's answer with media: its data (structured content, and JSON text) plus content items (a task's results). */
export class ToolAnswer {
  constructor(
    readonly data: Json,
    readonly media: Array<Record<string, unknown>>,
  ) {}
}

/** What a tool handler gets: the services, the caller (keyed tools), and a way to report progress. */
export interface ToolContext {
  services: Services;
  principal: Principal | null;
  progress(progress: number, total: number, message: string): Promise<void>;
  signal: AbortSignal;
}

/** One MCP tool: its JSON Schema input, the key scope it needs (none: public), and what it does. */
export interface Tool {
  name: string;
  title: string;
  description: string;
  inputSchema: (services: Services) => Json;
  scope?: Scope;
  readOnly: boolean;
  /** Ends something the caller cannot undo (cancel_task). */
  destructive?: boolean;
  run(args: Json, ctx: ToolContext): Promise<Json | ToolAnswer>;
}

const object = (properties: Json, required: string[] = []): Json => ({ type: 'object', properties, required, additionalProperties: false });
const listOpts = (s: Services) => ({ usdRubRate: s.config.USD_RUB_RATE, pricingBaseUrl: s.config.PRICING_BASE_URL });
/** get_task and wait_for_task take recordInfo's query as arguments: the same schema and rule. */
const taskIdProperties = (): Json => jsonSchema(recordInfoQuery, 'input').properties as Json;

const modelArg = { type: 'string', description: 'Model id or alias (list_models shows them)' };

/**
 * create_task's input, compact (issue 22): model, input, callBackUrl, idempotencyKey. The model's
 * own input schema is not repeated here (every model's would make the tool list tens of KB in every
 * session); get_model shows it, and createTask checks the input against it as REST does.
 */
function createTaskSchema(): Json {
  return object(
    {
      model: modelArg,
      input: { type: 'object', description: "The model's input: the JSON Schema in get_model's `parameters` (e.g. {prompt: ...})" },
      callBackUrl: jsonSchema(callBackUrl, 'input'),
      idempotencyKey: jsonSchema(idempotencyKey, 'input'),
    },
    ['model', 'input'],
  );
}

const PUBLIC: Tool[] = [
  {
    name: 'list_models',
    title: 'List models',
    readOnly: true,
    description: 'Every model of the catalog: id, aliases, kind (image, video, music), title, summary, whether enabled, and its price in one line.',
    inputSchema: () => object({}),
    run: async (_args, { services }) => ({
      models: services.catalog.models.map((m) => {
        const e = modelEntry(m, listOpts(services));
        return { id: e.id, aliases: e.aliases, kind: e.kind, title: e.title, description: e.description, enabled: e.enabled, price: e.pricing.display };
      }),
    }),
  },
  {
    name: 'get_model',
    title: 'Get a model',
    readOnly: true,
    description:
      "One model as GET /api/v1/models shows it: `parameters` is the JSON Schema of create_task's `input` for it; also price tiers and rules, media limits, routes and their health.",
    inputSchema: () => object({ model: modelArg }, ['model']),
    run: async (args, { services }) => {
      const m = findModel(services.catalog, args.model);
      return { ...modelEntry(m, listOpts(services)), routes: services.routeHealth.view(services.catalog, m.id) } as unknown as Json;
    },
  },
  {
    name: 'calculate_price',
    title: 'Calculate a price',
    readOnly: true,
    description: 'The exact price createTask charges for a model and parameters (same as GET /v1/pricing/calculate).',
    inputSchema: () => {
      const params = jsonSchema(calculatorParams, 'input');
      return { ...params, properties: { ...(params.properties as Json), model: modelArg }, additionalProperties: false };
    },
    run: async (args, { services }) => ({ ...calculatePrice(services.catalog, args, services.config.USD_RUB_RATE) }),
  },
  {
    name: 'get_price_list',
    title: 'Get the price list',
    readOnly: true,
    description: 'All models with their prices and price rules (same as GET /v1/pricing).',
    inputSchema: () => object({}),
    run: async (_args, { services }) => ({ ...priceList(services.catalog, listOpts(services)) }),
  },
];

const KEYED: Tool[] = [
  {
    name: 'upload_file',
    title: 'Upload a file',
    readOnly: false,
    scope: 'files:write',
    description:
      'Stores a photo (JPG, PNG, WebP), video (MP4, MOV) or audio file (MP3, WAV; video and audio at most 30 s) for 24 hours and returns its link (`url`) to pass in a model input. Give fileUrl (GenGate downloads it) or base64Data (base64 or a data: URL), not both.',
    inputSchema: () =>
      object({
        fileUrl: { type: 'string', maxLength: 8192, description: 'An http(s) link GenGate downloads the file from' },
        base64Data: { type: 'string', description: 'The file as base64, raw or as a data: URL (data:audio/mpeg;base64,...)' },
        fileName: { type: 'string', maxLength: 1000, description: 'Name of the stored file (sanitised; the extension follows the bytes)' },
      }),
    run: async (args, { services, principal }) => {
      const { fileUrl, base64Data, fileName } = args;
      if (fileUrl === undefined && base64Data === undefined) {
        throw Errors.missingField('fileUrl', 'or base64Data: give a link GenGate downloads, or the file as base64');
      }
      if (fileUrl !== undefined && base64Data !== undefined) throw Errors.invalid('give one of fileUrl and base64Data, not both');
      for (const [field, v] of Object.entries({ fileUrl, base64Data, fileName })) {
        if (v !== undefined && typeof v !== 'string') throw Errors.invalid(`${field} must be a string (got ${JSON.stringify(v)})`);
      }
      const name = fileName as string | undefined;
      const stored =
        typeof fileUrl === 'string'
          ? await uploadFromUrl(services, principal!.accountId, fileUrl, name)
          : await uploadFromBase64(services, principal!.accountId, base64Data as string, name);
      return { ...stored.result, bytes: stored.bytes, mimeType: stored.mime };
    },
  },
  {
    name: 'create_task',
    title: 'Create a task',
    readOnly: false,
    scope: 'tasks:write',
    description:
      "Creates a generation task and returns its taskId at once; then call wait_for_task. `input` follows the model's schema (get_model). The list price is charged now and refunded if the task fails. Pass idempotencyKey to make retries safe. Files for the input: upload_file first.",
    inputSchema: createTaskSchema,
    run: async (args, { services, principal }) => {
      const { idempotencyKey: key, ...body } = args;
      const created = await services.tasks.create(principal!, body, readIdempotencyKey(key, 'idempotencyKey'));
      return { taskId: created.taskId, task_id: created.taskId, status: 'submitted', replayed: created.replayed };
    },
  },
  {
    name: 'get_task',
    title: 'Get a task',
    readOnly: true,
    scope: 'tasks:read',
    description:
      "One task of the account, exactly as GET /api/v1/jobs/recordInfo shows it: state, result links, price, refund. A finished task's results also come as image or audio content when small, else as resource links.",
    inputSchema: () => object(taskIdProperties(), ['taskId']),
    run: async (args, { services, principal }) => withMedia(services, await services.tasks.get(principal!.accountId, readTaskId(args, 'mcp'))),
  },
  {
    name: 'wait_for_task',
    title: 'Wait for a task',
    readOnly: true,
    scope: 'tasks:read',
    description: `Waits until the task is final (success or fail) or the wait runs out (default ${WAIT_DEFAULT_SECONDS} s, at most ${WAIT_MAX_SECONDS} s), sending progress notifications; returns {done, task}. Call again when done is false.`,
    inputSchema: () =>
      object(
        {
          ...taskIdProperties(),
          timeoutSeconds: { type: 'integer', minimum: 1, maximum: WAIT_MAX_SECONDS, default: WAIT_DEFAULT_SECONDS, description: 'Longest wait in seconds' },
        },
        ['taskId'],
      ),
    run: async (args, ctx) => {
      const waited = await waitForTask(ctx, readTaskId(args, 'mcp'), args.timeoutSeconds);
      return new ToolAnswer(waited, await resultMedia(ctx.services, waited.task as Json));
    },
  },
  {
    name: 'list_tasks',
    title: 'List tasks',
    readOnly: true,
    scope: 'tasks:read',
    description: 'Recent tasks of the account, newest first (same as GET /api/v1/jobs/list); pass nextBefore as before for the next page.',
    inputSchema: () => ({ ...jsonSchema(listQuery, 'input'), additionalProperties: false }),
    run: async (args, { services, principal }) => services.tasks.list(principal!.accountId, parseListQuery(args)),
  },
  {
    name: 'cancel_task',
    title: 'Cancel a task',
    readOnly: false,
    destructive: true,
    scope: 'tasks:write',
    description:
      'Cancels a task of the account (same as POST /api/v1/jobs/cancel): a waiting task fails at once with failCode 499 and is refunded in full; a task already handed to a backend is refunded only when the backend confirms the cancel, else the call is refused (409) and the task runs on; a final task cannot be cancelled.',
    inputSchema: () => object(taskIdProperties(), ['taskId']),
    run: async (args, { services, principal }) => ({ ...(await services.tasks.cancel(principal!.accountId, readTaskId(args, 'mcp'))) }),
  },
  {
    name: 'get_balance',
    title: 'Get the balance',
    readOnly: true,
    scope: 'balance:read',
    description: 'Balance of the account (same as GET /api/v1/user/balance).',
    inputSchema: () => object({}),
    run: async (_args, { services, principal }) => {
      return balanceView(await services.accounts.balanceMicros(principal!.accountId), services.config.USD_RUB_RATE);
    },
  },
];

/** A task with its results as media content when it succeeded. */
async function withMedia(services: Services, task: Json): Promise<ToolAnswer> {
  return new ToolAnswer(task, await resultMedia(services, task));
}

/** Every tool; keyed ones need `Authorization: Bearer <API key>` on the MCP request. */
export const TOOLS: Tool[] = [...PUBLIC, ...KEYED];
