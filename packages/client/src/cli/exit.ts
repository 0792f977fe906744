import {
  AbortedError,
  AuthenticationError,
  ConnectionError,
  GenGateError,
  InvalidRequestError,
  NotFoundError,
  PaymentRequiredError,
  PermissionError,
  RateLimitError,
  ServerError,
  ModelDisabledError,
  TaskFailedError,
  TaskNotCancellableError,
  TaskNotFoundError,
  TimeoutError,
} from '../errors.js';

/** Exit codes of the client commands, by kind of failure (docs/cli.md). */
export const EXIT = {
  ok: 0,
  unexpected: 1,
  usage: 2,
  auth: 3,
  payment: 4,
  refused: 5,
  taskFailed: 6,
  timeout: 7,
  rateLimited: 8,
  unavailable: 9,
  interrupted: 130,
} as const;

/** A wrong command line: exit 2 with this message. */
export class UsageError extends Error {}

export function exitCodeOf(e: unknown): number {
  if (e instanceof UsageError) return EXIT.usage;
  if (e instanceof TaskFailedError) return EXIT.taskFailed;
  if (e instanceof TimeoutError) return EXIT.timeout;
  if (e instanceof AbortedError) return EXIT.interrupted;
  if (e instanceof AuthenticationError || e instanceof PermissionError) return EXIT.auth;
  if (e instanceof PaymentRequiredError) return EXIT.payment;
  if (e instanceof RateLimitError) return EXIT.rateLimited;
  if (e instanceof ConnectionError || e instanceof ServerError || e instanceof ModelDisabledError) return EXIT.unavailable;
  if (e instanceof InvalidRequestError || e instanceof TaskNotFoundError || e instanceof NotFoundError || e instanceof TaskNotCancellableError) {
    return EXIT.refused;
  }
  if (e instanceof GenGateError) return e.status >= 500 ? EXIT.unavailable : EXIT.refused;
  return EXIT.unexpected;
}
