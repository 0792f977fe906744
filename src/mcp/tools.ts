import type { Principal, Scope } from '../accounts/index.js';
import { findModel, modelEntry, parametersSchema } from '../catalog/index.js';
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
} from '../api/index.js';
import { calculatePrice, priceList } from '../pricing/index.js';
import type { Services } from '../services.js';
import { waitForTask, WAIT_DEFAULT_SECONDS, WAIT_MAX_SECONDS } from './wait.js';

type Json = Record<string, unknown>;

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
  run(args: Json, ctx: ToolContext): Promise<Json>;
}

const object = (properties: Json, required: string[] = []): Json => ({ type: 'object', properties, required, additionalProperties: false });
const modelIds = (s: Services) => s.catalog.models.flatMap((m) => [m.id, ...m.aliases]);
const listOpts = (s: Services) => ({ usdRubRate: s.config.USD_RUB_RATE, pricingBaseUrl: s.config.PRICING_BASE_URL });
/** get_task and wait_for_task take recordInfo's query as arguments: the same schema and rule. */
const taskIdProperties = (): Json => jsonSchema(recordInfoQuery, 'input').properties as Json;

/** create_task's input: model, input, callBackUrl, idempotencyKey; `input` follows the model's catalog schema (one branch per model). */
function createTaskSchema(s: Services): Json {
  const base = object(
    {
      model: { type: 'string', enum: modelIds(s), description: 'Model id or alias (see list_models)' },
      input: { type: 'object', description: "The model's input object; its schema is the branch of oneOf for the model, also shown by get_model" },
      callBackUrl: jsonSchema(callBackUrl, 'input'),
      idempotencyKey: jsonSchema(idempotencyKey, 'input'),
    },
    ['model', 'input'],
  );
  const oneOf = s.catalog.models.map((m) => {
    const { $schema: _drop, ...input } = parametersSchema(m);
    return { properties: { model: { enum: [m.id, ...m.aliases] }, input } };
  });
  return { ...base, oneOf };
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
    description: 'One model as GET /api/v1/models shows it: the JSON Schema of its input, price tiers and rules, media limits, routes and their health.',
    inputSchema: (s) => object({ model: { type: 'string', enum: modelIds(s), description: 'Model id or alias' } }, ['model']),
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
    inputSchema: (s) => {
      const params = jsonSchema(calculatorParams, 'input');
      const model = { type: 'string', enum: modelIds(s), description: 'Model id or alias' };
      return { ...params, properties: { ...(params.properties as Json), model }, additionalProperties: false };
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
    name: 'create_task',
    title: 'Create a task',
    readOnly: false,
    scope: 'tasks:write',
    description:
      'Creates a generation task and returns its taskId at once. The list price is charged now and refunded if the task fails. Pass idempotencyKey to make retries safe. Needs Authorization: Bearer <API key>.',
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
    description: 'One task of the account, exactly as GET /api/v1/jobs/recordInfo shows it: state, result links, price, refund.',
    inputSchema: () => object(taskIdProperties(), ['taskId']),
    run: async (args, { services, principal }) => services.tasks.get(principal!.accountId, readTaskId(args, 'mcp')),
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
    run: async (args, ctx) => waitForTask(ctx, readTaskId(args, 'mcp'), args.timeoutSeconds),
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

/** Every tool; keyed ones need `Authorization: Bearer <API key>` on the MCP request. */
export const TOOLS: Tool[] = [...PUBLIC, ...KEYED];
