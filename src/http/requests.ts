import { z } from 'zod';
import { MAX_IDEMPOTENCY_KEY, STATES, type ListQuery, type TaskState } from '../tasks/index.js';
import { parseUsd } from '../billing/index.js';
import { parseWith } from './validate.js';

/**
 * Request schemas shared by the REST routes, the MCP tools and the OpenAPI document, so the
 * three accept, refuse and describe the same things.
 */

const wholeText = (min: number, max: number) =>
  z.union([z.number(), z.string().regex(/^\d{1,16}$/, `must be a whole number from ${min} to ${max}`)]).transform(Number).pipe(z.number().int().min(min).max(max));

/** SPEC endpoint 3 query (GET /jobs/list). */
export const listQuery = z.object({
  limit: wholeText(1, 100).default(20).describe('Page size, 1 to 100'),
  state: z.enum(STATES as [string, ...string[]]).optional().describe('Only tasks in this state'),
  before: wholeText(1, Number.MAX_SAFE_INTEGER).optional().describe('The nextBefore of the previous page'),
});

/** The list query as the tasks service takes it; refusals name the parameter like every other 400. */
export function parseListQuery(value: unknown): ListQuery {
  const q = parseWith(listQuery, value, '');
  return { limit: q.limit, ...(q.state ? { state: q.state as TaskState } : {}), ...(q.before !== undefined ? { before: q.before } : {}) };
}

/** SPEC endpoint 2 query (GET /jobs/recordInfo). */
export const recordInfoQuery = z.object({
  taskId: z.string().min(1).describe('The taskId createTask returned'),
});

/** The Idempotency-Key header of createTask (DECISIONS §8). */
export const idempotencyKey = z
  .string()
  .min(1)
  .max(MAX_IDEMPOTENCY_KEY)
  .regex(/^[\x21-\x7e]+$/)
  .describe('Same key + same body within 24 hours returns the same task without a second charge; at most 128 visible ASCII characters');

/** A callBackUrl as createTask accepts it. */
export const callBackUrl = z.string().max(2048).describe('http:// or https:// URL; the result is POSTed there when the task finishes');

const usd = z
  .union([z.string(), z.number()])
  .refine((v) => parseUsd(v) !== null, 'must be a USD amount such as "10" or "2.50" (at most 6 decimals)')
  .describe('USD amount, e.g. "10" or "2.50" (at most 6 decimals)');
const rateLimit = z.number().int().min(1).max(1_000_000_000).nullable();

/** Admin API bodies (/admin/v1/*). */
export const adminBodies = {
  createAccount: z.object({ name: z.string().min(1).max(200), balance: usd.optional() }).strict(),
  topup: z.object({ amount: usd, note: z.string().max(500).optional() }).strict(),
  createKey: z.object({ scopes: z.array(z.string()).optional(), models: z.array(z.string()).optional() }).strict(),
  limits: z.object({ write: rateLimit.optional(), read: rateLimit.optional() }).strict(),
};
