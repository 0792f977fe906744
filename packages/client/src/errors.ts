/**
 * Errors of the client. A refusal by the server is a `GenGateError` subclass chosen by the answer's
 * `error` id (both error styles map to the same class), carrying the HTTP status, the server's
 * `msg` and the `x-request-id` to quote when reporting it.
 */
export class GenGateError extends Error {
  /** The answer's `error` id (`payment_required`, `rate_limited`, ...); a client-side id for the errors the client makes itself. */
  readonly error: string;
  /** The HTTP status, 0 when no answer arrived. */
  readonly status: number;
  /** The server's `msg` (or the client's own message). */
  readonly msg: string;
  /** The answer's `x-request-id`, null when no answer arrived. */
  readonly requestId: string | null;
  /** The answer's `data` (402 carries `{balance, required, currency, topUpUrl}`), else null. */
  readonly data: unknown;

  constructor(error: string, status: number, msg: string, requestId: string | null = null, data: unknown = null) {
    super(requestId ? `${msg} (${error}, HTTP ${status}, request ${requestId})` : status ? `${msg} (${error}, HTTP ${status})` : msg);
    this.name = new.target.name;
    this.error = error;
    this.status = status;
    this.msg = msg;
    this.requestId = requestId;
    this.data = data;
  }
}

/** 400/422: the request was wrong (body, input value, query); `msg` names the field and the allowed values. */
export class InvalidRequestError extends GenGateError {}
/** 422 `validation_error`: a required field is missing, or an upload was refused. */
export class ValidationError extends InvalidRequestError {}
/** The model is not in the catalog. */
export class UnsupportedModelError extends InvalidRequestError {}
/** The content check refused the prompt or a photo; nothing was charged. */
export class ContentRejectedError extends InvalidRequestError {}
/** 401: the key is missing, unknown or revoked. */
export class AuthenticationError extends GenGateError {}
/** 402: the balance is below the price; `data` has `balance`, `required` and `topUpUrl`. */
export class PaymentRequiredError extends GenGateError {}
/** 403: the account is disabled, or the key lacks the scope or the model. */
export class PermissionError extends GenGateError {}
/** 404: the task is not one of the account's. */
export class TaskNotFoundError extends GenGateError {}
/** 404: no such route or file. */
export class NotFoundError extends GenGateError {}
/** 409: the task is final, or its backend cannot cancel it. */
export class TaskNotCancellableError extends GenGateError {}
/** 429: over the rate limit (after the client's own retries); `retryAfterSeconds` says when to come back. */
export class RateLimitError extends GenGateError {
  retryAfterSeconds: number | null = null;
}
/** 408/431: the request was too slow or its headers too large. */
export class RequestRejectedError extends GenGateError {}
/** 5xx other than 505: the server failed; quote `requestId`. */
export class ServerError extends GenGateError {}
/** 505: the operator disabled the model. */
export class ModelDisabledError extends GenGateError {}
/** No answer: the connection failed (after the client's own retries). */
export class ConnectionError extends GenGateError {}
/** `timeoutMs` passed before the task was final (the task runs on; it is not cancelled). */
export class TimeoutError extends GenGateError {}
/** The caller's AbortSignal fired. */
export class AbortedError extends GenGateError {}

/** A task that ended in `fail`: `failCode`/`failMsg` as the task shows them, and the task itself (refunded unless the server says otherwise). */
export class TaskFailedError extends GenGateError {
  readonly taskId: string;
  readonly failCode: number | string;
  readonly task: unknown;
  constructor(taskId: string, failCode: number | string, failMsg: string, task: unknown) {
    super('task_failed', 0, `task ${taskId} failed (${failCode}): ${failMsg}`);
    this.taskId = taskId;
    this.failCode = failCode;
    this.task = task;
  }
}

/** The class of each `error` id, in both error styles and for the price calculator's codes. */
const BY_ID: Record<string, typeof GenGateError> = {
  invalid_request_error: InvalidRequestError,
  invalid_parameter: InvalidRequestError,
  missing_parameter: InvalidRequestError,
  validation_error: ValidationError,
  unsupported_model: UnsupportedModelError,
  nsfw_content_detected: ContentRejectedError,
  authentication_error: AuthenticationError,
  unauthorized: AuthenticationError,
  payment_required: PaymentRequiredError,
  insufficient_balance: PaymentRequiredError,
  permission_error: PermissionError,
  task_not_found: TaskNotFoundError,
  not_found: NotFoundError,
  task_not_cancellable: TaskNotCancellableError,
  rate_limit_error: RateLimitError,
  rate_limited: RateLimitError,
  request_timeout: RequestRejectedError,
  headers_too_large: RequestRejectedError,
  server_error: ServerError,
  model_disabled: ModelDisabledError,
};

/** The error for an answer: by `error` id, else by status. */
export function errorFor(error: string | undefined, status: number, msg: string, requestId: string | null, data: unknown = null): GenGateError {
  const byStatus = (): typeof GenGateError =>
    status === 401
      ? AuthenticationError
      : status === 402
        ? PaymentRequiredError
        : status === 403
          ? PermissionError
          : status === 404
            ? NotFoundError
            : status === 409
              ? TaskNotCancellableError
              : status === 429
                ? RateLimitError
                : status === 505
                  ? ModelDisabledError
                  : status >= 500
                    ? ServerError
                    : InvalidRequestError;
  const Class = (error !== undefined ? BY_ID[error] : undefined) ?? byStatus();
  return new Class(error ?? `http_${status}`, status, msg, requestId, data);
}
