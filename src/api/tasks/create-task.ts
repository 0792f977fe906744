import { z } from 'zod';
import { Errors, shown } from '../../errors.js';
import { MAX_IDEMPOTENCY_KEY } from '../../tasks/index.js';
import type { KeyedOperation } from '../operation.js';
import * as S from '../schemas.js';

/** The Idempotency-Key of createTask (DECISIONS §8): the one rule the REST header, the MCP argument and the OpenAPI document share. */
export const idempotencyKey = z
  .string()
  .min(1)
  .max(MAX_IDEMPOTENCY_KEY)
  .regex(/^[\x21-\x7e]+$/)
  .describe('Same key + same body within 24 hours returns the same task without a second charge; at most 128 visible ASCII characters');

/** An idempotency key as sent (`name`: what this face calls it): absent, or valid by `idempotencyKey`; anything else is a 400. */
export function readIdempotencyKey(value: unknown, name: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw Errors.invalid(`${name} must be a string (got ${JSON.stringify(value)})`);
  if (idempotencyKey.safeParse(value).success) return value;
  throw Errors.invalid(
    `Idempotency-Key must be 1 to ${MAX_IDEMPOTENCY_KEY} visible ASCII characters without spaces (got ${value.length > MAX_IDEMPOTENCY_KEY ? `${value.length} characters` : shown(value)})`,
  );
}

/** The Idempotency-Key header of a create (a repeated header counts as its joined text). */
export function idempotencyHeader(headers: Record<string, string | string[] | undefined>): string | undefined {
  const header = headers['idempotency-key'];
  return readIdempotencyKey(Array.isArray(header) ? header.join(',') : header, 'Idempotency-Key');
}

/** A create's answer: `data`, marked `idempotent-replayed: true` when the key found an earlier task. */
export function createdReply<T>(created: { replayed: boolean }, data: T) {
  return created.replayed ? { data, headers: { 'idempotent-replayed': 'true' } } : { data };
}

/** POST /api/v1/jobs/createTask (SPEC endpoint 1); the MCP tool create_task reads its key with the same rule. */
export const createTask: KeyedOperation = {
  spec: {
    method: 'post',
    path: '/api/v1/jobs/createTask',
    id: 'createTask',
    tag: 'Tasks',
    auth: 'key',
    scope: 'tasks:write',
    summary: 'Create a task',
    description: 'Charges the list price now and returns at once; refunded in full if the task fails. `input` follows the schema of the chosen `model`.',
    headers: { 'Idempotency-Key': idempotencyKey.optional() },
    body: 'createTask',
    ok: {
      schema: S.TaskCreated,
      envelope: true,
      description: 'Task created (or the same task again for a repeated Idempotency-Key; header idempotent-replayed: true)',
    },
    errors: ['invalid_request', 'missing_field', 'unsupported_model', 'content_rejected', 'insufficient_balance', 'model_disabled', 'upstream_limit'],
  },
  handler:
    (services) =>
    async ({ principal, body, headers }) => {
      const created = await services.tasks.create(principal, body, idempotencyHeader(headers));
      return createdReply(created, { taskId: created.taskId, task_id: created.taskId, status: 'submitted' });
    },
};
