import type { z } from 'zod';

/** The closed set of client-facing error kinds. Each maps to (status, `error`) per ERROR_STYLE below. */
export type ErrorKind =
  | 'invalid_request'
  | 'missing_field'
  | 'unsupported_model'
  | 'content_rejected'
  | 'unauthenticated'
  | 'insufficient_balance'
  | 'forbidden'
  | 'task_not_found'
  | 'not_cancellable'
  | 'upload_rejected'
  | 'rate_limited'
  | 'internal'
  | 'model_disabled'
  | 'not_found'
  | 'request_timeout'
  | 'headers_too_large'
  | 'conflict'
  | 'upstream_limit'
  | 'payments_unavailable';

export type ErrorStyle = 'default' | 'reference';

/** DECISIONS §2: the one table that knows about error styles. */
export const ERROR_TABLE: Record<ErrorKind, Record<ErrorStyle, readonly [number, string]>> = {
  invalid_request: { default: [400, 'invalid_request_error'], reference: [422, 'validation_error'] },
  missing_field: { default: [422, 'validation_error'], reference: [422, 'validation_error'] },
  unsupported_model: { default: [400, 'unsupported_model'], reference: [422, 'unsupported_model'] },
  content_rejected: { default: [400, 'nsfw_content_detected'], reference: [400, 'nsfw_content_detected'] },
  unauthenticated: { default: [401, 'authentication_error'], reference: [401, 'unauthorized'] },
  insufficient_balance: { default: [402, 'payment_required'], reference: [402, 'insufficient_balance'] },
  forbidden: { default: [403, 'permission_error'], reference: [403, 'permission_error'] },
  task_not_found: { default: [404, 'task_not_found'], reference: [404, 'task_not_found'] },
  not_cancellable: { default: [409, 'task_not_cancellable'], reference: [409, 'task_not_cancellable'] },
  upload_rejected: { default: [422, 'validation_error'], reference: [422, 'validation_error'] },
  rate_limited: { default: [429, 'rate_limit_error'], reference: [429, 'rate_limited'] },
  internal: { default: [500, 'server_error'], reference: [500, 'server_error'] },
  model_disabled: { default: [505, 'model_disabled'], reference: [505, 'model_disabled'] },
  not_found: { default: [404, 'not_found'], reference: [404, 'not_found'] },
  request_timeout: { default: [408, 'request_timeout'], reference: [408, 'request_timeout'] },
  headers_too_large: { default: [431, 'headers_too_large'], reference: [431, 'headers_too_large'] },
  conflict: { default: [409, 'conflict'], reference: [409, 'conflict'] },
  upstream_limit: { default: [422, 'invalid_request_error'], reference: [422, 'validation_error'] },
  payments_unavailable: { default: [503, 'service_unavailable'], reference: [503, 'service_unavailable'] },
};

/** A client-facing error: its kind picks the status, `msg` is shown as is. */
export class AppError extends Error {
  constructor(
    readonly kind: ErrorKind,
    message: string,
    readonly data: unknown = null,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'AppError';
  }
}

/** Renders a received value for a message: short, JSON-quoted, never the whole of a long string. */
export function shown(value: unknown): string {
  if (value === undefined) return 'nothing';
  const text = preview(value, 0);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

/** JSON-like text of a value, cut short at depth 4 and after 12 items: a hostile body nested 100,000 deep must not overflow the stack. */
function preview(value: unknown, depth: number): string {
  if (value === null || typeof value !== 'object') {
    if (typeof value === 'bigint' || typeof value === 'symbol' || typeof value === 'function') return String(value);
    return JSON.stringify(value) ?? String(value);
  }
  if (depth >= 4) return Array.isArray(value) ? '[...]' : '{...}';
  if (Array.isArray(value))
    return `[${value
      .slice(0, 12)
      .map((v) => preview(v, depth + 1))
      .join(',')}${value.length > 12 ? ',...' : ''}]`;
  const entries = Object.entries(value);
  const inner = entries.slice(0, 12).map(([k, v]) => `${JSON.stringify(k)}:${preview(v, depth + 1)}`);
  return `{${inner.join(',')}${entries.length > 12 ? ',...' : ''}}`;
}

/** Factories for every client error; routes and services throw these, never raw statuses. */
export const Errors = {
  invalid: (msg: string) => new AppError('invalid_request', msg),
  missingField: (field: string, hint = '') => new AppError('missing_field', `${field} is required${hint ? `; ${hint}` : ''}`),
  unsupportedModel: (msg: string) => new AppError('unsupported_model', msg),
  contentRejected: (msg: string) => new AppError('content_rejected', msg),
  unauthenticated: (msg: string) => new AppError('unauthenticated', msg),
  insufficientBalance: (msg: string, data: { balance: string; required: string; currency: string; topUpUrl: string }) =>
    new AppError('insufficient_balance', msg, data),
  forbidden: (msg: string) => new AppError('forbidden', msg),
  taskNotFound: (taskId: string) => new AppError('task_not_found', `task ${shown(taskId)} was not found in this account`),
  notCancellable: (msg: string) => new AppError('not_cancellable', msg),
  uploadRejected: (msg: string) => new AppError('upload_rejected', msg),
  rateLimited: (msg: string, retryAfterSeconds: number) => new AppError('rate_limited', msg, null, { 'retry-after': String(retryAfterSeconds) }),
  modelDisabled: (model: string) => new AppError('model_disabled', `model ${model} is temporarily disabled by the operator`),
  notFound: (msg: string) => new AppError('not_found', msg),
  /** The request is valid but the state of what it names refuses it (an operator debit larger than the balance). */
  conflict: (msg: string, data: unknown = null) => new AppError('conflict', msg, data),
  paymentsUnavailable: (msg: string) => new AppError('payments_unavailable', msg),
  /** The model accepts the input but the upstream of one of its routes refuses it (decision 2503): 422 naming that limit. */
  upstreamLimit: (msg: string) => new AppError('upstream_limit', msg),
};

/** (status, error type) of a kind under a style. */
export function statusOf(kind: ErrorKind, style: ErrorStyle): readonly [number, string] {
  return ERROR_TABLE[kind][style];
}

/** Parses `value` with a zod schema; a refusal names the field, what is allowed and what was sent (400, or 422 for a missing field). */
export function parseWith<S extends z.ZodType>(schema: S, value: unknown, where: string): z.output<S> {
  const result = schema.safeParse(value ?? {});
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const field = [where, ...issue.path.map(String)].filter(Boolean).join('.');
  const received = issue.path.reduce<unknown>((v, k) => (v && typeof v === 'object' ? (v as Record<PropertyKey, unknown>)[k] : undefined), value);
  // A missing value refused by a union (a USD amount is text or a number) is missing too, not "Invalid input".
  if (received === undefined && (issue.code === 'invalid_type' || issue.code === 'invalid_union')) throw Errors.missingField(field);
  throw Errors.invalid(`${field}: ${issue.message} (got ${shown(received)})`);
}
