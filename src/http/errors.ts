import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, statusOf, type ErrorKind, type ErrorStyle } from '../errors.js';
import { failure } from '../api/index.js';

/** Fastify's own client errors (parsing, content type, size) as our kinds and messages. */
function fromFastify(err: FastifyError, limit: number, contentType: string | undefined): AppError | null {
  switch (err.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new AppError('invalid_request', `request body is not valid JSON: ${err.message.replace(/^.*?: /, '')}`);
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new AppError('invalid_request', 'request body is empty; send a JSON object');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AppError('upload_rejected', `request body is larger than the limit of ${limit} bytes`);
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      // Fastify's message is "Unsupported Media Type" alone when the header is missing: say which header.
      if (contentType === undefined || contentType === '')
        return new AppError('invalid_request', 'the Content-Type header is missing; send Content-Type: application/json with a JSON body');
      return new AppError('invalid_request', `Content-Type must be application/json (got ${JSON.stringify(contentType.slice(0, 100))})`);
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new AppError('invalid_request', 'Content-Length does not match the body');
    default:
      break;
  }
  // PostgreSQL refuses text with a NUL character (SQLite keeps it): the client's text, not a server fault.
  if (err.code === '22021' || err.code === '22P05') {
    return new AppError('invalid_request', 'text in the request must not contain the NUL character (\\u0000 or %00)');
  }
  if (err instanceof SyntaxError || (err.statusCode === 400 && /JSON/i.test(err.message))) {
    return new AppError('invalid_request', `request body is not valid JSON: ${err.message}`);
  }
  if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500) {
    return new AppError('invalid_request', err.message);
  }
  return null;
}

/** The body of an error: GenGate's envelope, or kie.ai's upload answer (the envelope with `success: false` first). */
export type ErrorShape = 'envelope' | 'kie-upload';

/** Maps any thrown error to the envelope (or `shape`); unexpected errors become a 500 that leaks nothing. */
export function errorHandler(style: ErrorStyle, bodyLimit: number, shape: ErrorShape = 'envelope') {
  return (err: FastifyError | Error, req: FastifyRequest, reply: FastifyReply) => {
    const appErr = err instanceof AppError ? err : fromFastify(err as FastifyError, req.routeOptions?.bodyLimit ?? bodyLimit, req.headers['content-type']);
    // Refused before its body was read (a wrong key, a body too large): answer, then close, rather than read on (decision 2402).
    if (!req.raw.complete) reply.header('connection', 'close');
    if (!appErr && req.raw.aborted) {
      // The client went away mid-body (or was cut for sending it too slowly): no fault of ours, and nobody to answer.
      req.log.info({ code: (err as NodeJS.ErrnoException).code }, 'client went away');
      return sendError(reply, style, new AppError('invalid_request', 'the request was aborted'), shape);
    }
    if (!appErr) {
      req.log.error({ err }, 'unhandled error');
      return sendError(reply, style, new AppError('internal', `internal error; quote request id ${req.id} when reporting it`), shape);
    }
    return sendError(reply, style, appErr, shape);
  };
}

/** Sends an AppError as the envelope with its mapped status and headers. */
export function sendError(reply: FastifyReply, style: ErrorStyle, err: AppError, shape: ErrorShape = 'envelope') {
  const [status, type] = statusOf(err.kind, style);
  for (const [k, v] of Object.entries(err.headers)) reply.header(k, v);
  // An error is never kept by a cache, whatever the route had set before it failed.
  reply.header('cache-control', 'no-store');
  const body = failure(status, type, err.message, err.data);
  return reply.code(status).send(shape === 'kie-upload' ? { success: false, ...body } : body);
}

export type { ErrorKind };
