import { z } from 'zod';
import { API_DIALECTS } from '../accounts/index.js';

/**
 * zod schemas of what GenGate answers (SPEC "Resources and their fields"). The OpenAPI document
 * is generated from them; tests check real answers against them, so they cannot drift.
 */

const usd4 = z
  .string()
  .regex(/^\d+\.\d{4}$/)
  .describe('USD as text with exactly 4 fractional digits');
const STATES = ['waiting', 'queuing', 'generating', 'success', 'fail'] as const;

/** `data` of createTask. */
export const TaskCreated = z.object({
  taskId: z.string().describe('Task identifier (tk_ + 8 characters of the creation time + 22 random URL-safe characters)'),
  task_id: z.string().describe('Alias of taskId'),
  status: z.literal('submitted'),
});

/** DECISIONS §14: delivery status of a callback. */
/** `data` of POST /jobs/cancel (decision 1901): the task is now failed with failCode 499 and refunded in full. */
export const TaskCancelled = z.object({
  taskId: z.string(),
  state: z.literal('fail'),
  status: z.literal('failed'),
  failCode: z.literal(499),
  refunded: z.literal(true),
});

export const CallbackStatus = z.object({
  url: z.string(),
  status: z.enum(['pending', 'delivered', 'failed']),
  attempts: z.number().int(),
  lastAttemptAt: z.number().int().nullable(),
  lastStatusCode: z.number().int().nullable(),
  lastError: z.string().nullable(),
  deliveredAt: z.number().int().nullable(),
});

const VideoResult = z.object({
  videos: z.array(z.object({ url: z.string() })),
  duration: z.number().nullable().describe('Real length in seconds'),
  resultUrls: z.array(z.string()),
});

/** SPEC "Task": `data` of recordInfo and the items of list. */
export const Task = z.object({
  taskId: z.string(),
  task_id: z.string().describe('Alias of taskId'),
  model: z.string().describe('Canonical model id'),
  state: z.enum(STATES),
  status: z.enum(['pending', 'processing', 'completed', 'failed']).describe('Alias of state'),
  param: z.string().describe('The createTask body as sent, as a JSON string'),
  resultJson: z
    .union([
      z.string().describe('Images and music: JSON text {"resultUrls": [...]}; in the kie dialect every model, video as {"resultUrls", "videos", "duration"}'),
      VideoResult,
      z.null(),
    ])
    .describe(
      'null until success; an object only for video tasks in the gengate dialect (tasks created under a kie.ai id or by a kie-dialect account get text)',
    ),
  lastFrameUrl: z.string().nullable().optional().describe('Only when return_last_frame was asked; null until success'),
  failCode: z.union([z.literal(''), z.number().int()]),
  failMsg: z.string(),
  error: z.object({ code: z.number().int(), message: z.string(), type: z.string() }).nullable(),
  costTime: z.number().int().nullable().describe('completeTime − createTime in ms; null until final'),
  createTime: z.number().int(),
  updateTime: z.number().int(),
  completeTime: z.number().int().nullable(),
  progress: z.number(),
  creditsConsumed: z.number().describe('USD charged; 0 after a refund'),
  costUsd: z.string().describe('Final price in USD, 3 decimals'),
  costRub: z.number(),
  refunded: z.boolean(),
  filesExpired: z.boolean(),
  callback: CallbackStatus.nullable(),
});

/** SPEC "Task list". */
export const TaskList = z.object({
  items: z.array(Task),
  nextBefore: z.number().int().nullable().describe('Pass as `before` for the next page; null on the last page'),
});

/** SPEC "Upload result". */
export const UploadResult = z.object({
  url: z.string().describe('Link to pass in a model input'),
  fileName: z.string(),
  expiresInDays: z.literal(1),
  kind: z.enum(['image', 'video', 'audio']),
  duration: z.number().describe('Seconds of a video or audio file; 0 for a photo'),
  seconds: z.number().int().describe('Whole seconds, rounded half up; 0 for a photo'),
});

/** SPEC "Balance". */
export const Balance = z.object({ balance: usd4, currency: z.literal('USD'), balanceRub: z.number() });

/** SPEC: `data` of the 402 answer. */
export const PaymentRequired = z.object({ balance: usd4, required: usd4, currency: z.literal('USD'), topUpUrl: z.string() });

/** SPEC "Price result" (no envelope). */
export const PriceResult = z.object({
  ok: z.literal(true),
  model: z.string(),
  unit: z.enum(['second', 'image', 'run', 'characters']),
  params: z.record(z.string(), z.unknown()),
  billable_seconds: z.number(),
  price_usd: z.number(),
  price_rub: z.number(),
  price_display: z.string(),
});

/** The pricing host's refusal body (400, and 429 when rate limited). */
export const PriceRefusal = z.object({
  ok: z.literal(false),
  error: z.object({
    code: z.enum(['missing_parameter', 'invalid_parameter', 'unsupported_model', 'rate_limited']),
    message: z.string(),
    field: z.string().nullable(),
  }),
});

const Amount = z.object({ usd: z.number(), micros: z.number().int(), rub: z.number() });
const Tier = z.object({ when: z.record(z.string(), z.string()), price: Amount, with_client_video: Amount.optional() });

/** One entry of GET /api/v1/models (`parameters` is the model's input schema; see components InputOf...). */
export const ModelEntry = z.object({
  id: z.string(),
  aliases: z.array(z.string()),
  input_mappings: z
    .record(z.string(), z.array(z.string()))
    .describe('Names (kie.ai model ids, operator aliases) whose input names are mapped before validation, each mapping in words'),
  kind: z.enum(['image', 'video', 'audio', 'music', 'speech']),
  title: z.string(),
  description: z.string(),
  enabled: z.boolean(),
  parameters: z.record(z.string(), z.unknown()).describe('JSON Schema (2020-12) of input'),
  pricing: z.object({
    unit: z.enum(['second', 'image', 'run', 'characters']),
    price_by: z.string().nullable(),
    display: z.string(),
    tiers: z.array(Tier),
    rules: z.array(z.string()),
    calculator_url: z.string(),
  }),
  limits: z.record(z.string(), z.unknown()),
  routes: z
    .array(
      z.object({
        backend: z.string().describe('Backend kind: local, same-api, byteplus, fal, replicate, kie, comfyui'),
        state: z
          .enum(['closed', 'open', 'half-open'])
          .describe('Circuit breaker: closed = healthy, open = skipped for now, half-open = one trial task allowed'),
        credit: z
          .enum(['ok', 'low', 'unknown'])
          .optional()
          .describe("Routes that read their upstream account's credit (kie): low = below the route's minimum, skipped for now; unknown = not read yet"),
      }),
    )
    .describe('The routes of the model in the order they are tried, with their health in this process'),
});

/** GET /v1/pricing. */
export const PriceList = z.object({
  object: z.literal('price_list'),
  currency: z.literal('USD'),
  usd_rub_rate: z.number(),
  rounding: z.string(),
  calculator_url: z.string(),
  models: z.array(
    z.object({
      id: z.string(),
      aliases: z.array(z.string()),
      kind: z.enum(['image', 'video', 'audio', 'music', 'speech']),
      enabled: z.boolean(),
      unit: z.enum(['second', 'image', 'run', 'characters']),
      price_by: z.string().nullable(),
      tiers: z.array(Tier),
      display: z.string(),
      rules: z.array(z.string()),
    }),
  ),
});

/** Admin API views. */
export const Account = z.object({
  id: z.string(),
  name: z.string(),
  status: z.enum(['active', 'disabled']),
  balance: z.string(),
  balanceMicros: z.number().int(),
  createdAt: z.string().describe('ISO 8601'),
  limits: z
    .object({ write: z.number().int().nullable(), read: z.number().int().nullable() })
    .optional()
    .describe('Per-key rate limits of the account; null means the configured default'),
  dialect: z
    .enum(API_DIALECTS)
    .describe('The dialect of the tasks the account creates: kie makes their resultJson a JSON string for every model (decision 0402)'),
  webhookSecret: z.string().optional().describe('Only in the answers of create and show'),
});
export const ApiKey = z.object({
  id: z.string(),
  accountId: z.string(),
  name: z.string(),
  prefix: z.string(),
  scopes: z.array(z.string()).nullable(),
  models: z.array(z.string()).nullable(),
  createdAt: z.string(),
  revokedAt: z.string().nullable(),
  lastUsedAt: z.string().nullable(),
  expiresAt: z.string().nullable().describe('ISO 8601; after it the key answers 401. null: never'),
  createdBy: z.string().nullable().describe('Who made the key: a member id (mem_...), a key id (key_...), or null for the operator (decision 1907)'),
  budget: z
    .object({ amount: z.string(), amountMicros: z.number().int(), period: z.enum(['total', 'day', 'month']) })
    .nullable()
    .describe('Spend limit per period (day and month in UTC); a createTask past it answers 402. null: only the balance limits the key'),
  spent: z.string().optional().describe("Charges less their refunds in the budget's current period (in total without a budget); in lists and updates"),
  spentMicros: z.number().int().optional(),
  remaining: z.string().nullable().optional().describe('What the budget still allows in its current period; null without a budget'),
});
export const LedgerEntry = z.object({
  id: z.number().int(),
  kind: z.enum(['topup', 'charge', 'refund', 'partial_refund', 'adjustment']),
  amount: z.string(),
  amountMicros: z.number().int(),
  balanceAfter: z.string(),
  taskId: z.string().nullable(),
  keyId: z.string().nullable().describe('The key that made the charge of the task (on its charge and refunds)'),
  reason: z.string(),
  createdAt: z.string(),
});
/** A model as the operator sees it (admin API). */
export const ModelSwitch = z.object({
  id: z.string(),
  enabled: z.boolean().describe('In force now'),
  catalogEnabled: z.boolean().describe("The catalog's default"),
  switchedAt: z.number().int().nullable(),
});
/** An upstream route as the operator sees it (admin API): its breaker and, for a kie route, its kie.ai account's credit. */
export const RouteStatus = z.object({
  model: z.string(),
  route: z.string().describe('Route name (logs, metrics, the task row)'),
  backend: z.string(),
  state: z.enum(['closed', 'open', 'half-open']).describe('Circuit breaker in this process'),
  failuresInRow: z.number().int(),
  account: z
    .object({
      credit: z.number().nullable().describe('Credits left upstream (kie.ai credits), as last read; null before the first reading'),
      minCredit: z.number().nullable().describe("The route's min_credit"),
      low: z.boolean().describe('Below min_credit: the route is skipped'),
      readAt: z.number().int().nullable().describe('When it was read (ms since the epoch)'),
    })
    .nullable()
    .describe('null for routes whose upstream account is not read'),
});
export const AccountCreated = z.object({ account: Account, apiKey: z.string().describe('Shown only here'), key: ApiKey });
export const KeyCreated = z.object({ key: ApiKey, apiKey: z.string().describe('Shown only here') });

/** /healthz and /readyz. */
export const Health = z.object({ status: z.literal('ok') });
export const Ready = z.object({
  status: z.enum(['ok', 'unavailable']),
  checks: z.object({ database: z.string(), blobs: z.string(), media: z.string() }).describe('"ok" or the reason'),
});

/** `data` of kie.ai's Suno `POST /api/v1/generate` (decision 0404). */
export const SunoCreated = z.object({ taskId: z.string().describe('Task identifier; the task is also an ordinary suno-v6 task of /api/v1/jobs/recordInfo') });

const SunoTrack = z.object({
  id: z.string().describe('Track id (the result file id)'),
  audioUrl: z.string().describe('MP3 link (kept 24 hours)'),
  sourceAudioUrl: z.string().describe('Same as audioUrl'),
  streamAudioUrl: z.string().describe('Same as audioUrl: the link answers range requests'),
  sourceStreamAudioUrl: z.string().describe('Same as audioUrl'),
  imageUrl: z.null().describe('GenGate makes no cover image'),
  sourceImageUrl: z.null(),
  prompt: z.string().describe('The prompt (subject or lyrics) as sent'),
  modelName: z.string().describe('The suno-v6 version that ran (v6 without custom mode)'),
  title: z.string(),
  tags: z.string().describe('The style as sent'),
  createTime: z.number().int().describe('When the track was finished, ms since the epoch'),
  duration: z.number().nullable().describe('The length asked for in seconds; null for "auto" (GenGate does not measure tracks)'),
});

/** `data` of kie.ai's Suno `GET /api/v1/generate/record-info` (decision 0404). */
export const SunoRecord = z.object({
  taskId: z.string(),
  parentMusicId: z.literal(''),
  param: z.string().describe('The /api/v1/generate body as sent, as JSON text'),
  response: z.object({ taskId: z.string(), sunoData: z.array(SunoTrack).describe('The two tracks once SUCCESS; empty before') }),
  status: z
    .enum(['PENDING', 'TEXT_SUCCESS', 'FIRST_SUCCESS', 'SUCCESS', 'CREATE_TASK_FAILED', 'GENERATE_AUDIO_FAILED', 'CALLBACK_EXCEPTION', 'SENSITIVE_WORD_ERROR'])
    .describe(
      'PENDING until both tracks are ready (GenGate reports no lyrics or first-track stage: TEXT_SUCCESS, FIRST_SUCCESS and CALLBACK_EXCEPTION are never given), then SUCCESS; a failure by its failCode: 400 SENSITIVE_WORD_ERROR, 422 and 503 CREATE_TASK_FAILED, any other GENERATE_AUDIO_FAILED. Refunded in full on failure.',
    ),
  type: z.literal('GENERATE'),
  errorCode: z.number().int().nullable().describe('The failCode of a failed task'),
  errorMessage: z.string().nullable().describe('The failMsg of a failed task'),
});

/** kie.ai's upload answer (POST /api/file-*-upload): the whole body, no GenGate envelope. */
export const KieUpload = z.object({
  success: z.literal(true),
  code: z.literal(200),
  msg: z.literal('File uploaded successfully'),
  data: z.object({
    fileName: z.string().describe('Stored name (sanitised; the extension follows the bytes)'),
    filePath: z.string().describe('Sanitised uploadPath and fileName: folder/name'),
    downloadUrl: z.string().describe('The file link, usable in model inputs; kept 24 hours'),
    fileSize: z.number().int().describe('Bytes stored'),
    mimeType: z.string(),
    uploadedAt: z.string().describe('ISO 8601 time of the upload'),
  }),
});
