import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, statusOf, type ErrorKind, type ErrorStyle } from '../errors.js';
import { failure } from './envelope.js';

/** Fastify's own client errors (parsing, content type, size) as our kinds and messages. */
function fromFastify(err: FastifyError, limit: number): AppError | null {
  switch (err.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new AppError('invalid_request', `request body is not valid JSON: ${err.message.replace(/^.*?: /, '')}`);
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new AppError('invalid_request', 'request body is empty; send a JSON object');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AppError('upload_rejected', `request body is larger than the limit of ${limit} bytes`);
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new AppError('invalid_request', `Content-Type must be application/json (got ${JSON.stringify(err.message.split(': ').pop() ?? '')})`);
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new AppError('invalid_request', 'Content-Length does not match the body');
    default:
      break;
  }
  if (err instanceof SyntaxError || (err.statusCode === 400 && /JSON/i.test(err.message))) {
    return new AppError('invalid_request', `request body is not valid JSON: ${err.message}`);
  }
  if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500) {
    return new AppError('invalid_request', err.message);
  }
  return null;
}

/** Maps any thrown error to the envelope; unexpected errors become a 500 that leaks nothing. */
export function errorHandler(style: ErrorStyle, bodyLimit: number) {
  return (err: FastifyError | Error, req: FastifyRequest, reply: FastifyReply) => {
    const appErr = err instanceof AppError ? err : fromFastify(err as FastifyError, bodyLimit);
    if (!appErr) {
      req.log.error({ err }, 'unhandled error');
      return sendError(reply, style, new AppError('internal', `internal error; quote request id ${req.id} when reporting it`));
    }
    return sendError(reply, style, appErr);
  };
}

/** Sends an AppError as the envelope with its mapped status and headers. */
export function sendError(reply: FastifyReply, style: ErrorStyle, err: AppError) {
  const [status, type] = statusOf(err.kind, style);
  for (const [k, v] of Object.entries(err.headers)) reply.header(k, v);
  return reply.code(status).send(failure(status, type, err.message, err.data));
}

export type { ErrorKind };
