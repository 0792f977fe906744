import { z } from 'zod';
import { Errors, parseWith } from '../../errors.js';
import { STATES, type ListQuery, type TaskState } from '../../tasks/index.js';
import type { KeyedOperation } from '../operation.js';
import * as S from '../schemas.js';

const wholeText = (min: number, max: number) =>
  z
    .union([z.number(), z.string().regex(/^\d{1,16}$/, `must be a whole number from ${min} to ${max}`)])
    .transform(Number)
    .pipe(z.number().int().min(min).max(max));

/** SPEC endpoint 3 query (GET /jobs/list); also the arguments of the MCP tool list_tasks. */
export const listQuery = z.object({
  limit: wholeText(1, 100).default(20).describe('Page size, 1 to 100'),
  state: z
    .enum(STATES as [string, ...string[]])
    .optional()
    .describe('Only tasks in this state'),
  before: wholeText(1, Number.MAX_SAFE_INTEGER).optional().describe('The nextBefore of the previous page'),
  model: z.string().min(1).max(200).optional().describe("Only tasks of this model (its canonical id, as in the task's `model`)"),
  since: wholeText(0, Number.MAX_SAFE_INTEGER).optional().describe('Only tasks created at or after this time (Unix milliseconds, as createTime)'),
  until: wholeText(0, Number.MAX_SAFE_INTEGER).optional().describe('Only tasks created before this time (Unix milliseconds, as createTime)'),
});

/** The list query as the tasks service takes it; refusals name the parameter like every other 400. */
export function parseListQuery(value: unknown): ListQuery {
  // A misspelt filter (`status=fail`, `page=2`) must not quietly answer the unfiltered first page.
  const unknown = Object.keys(value && typeof value === 'object' ? value : {}).find((k) => !Object.hasOwn(listQuery.shape, k));
  if (unknown !== undefined)
    throw Errors.invalid(`unknown query parameter ${JSON.stringify(unknown)}; jobs/list takes ${Object.keys(listQuery.shape).join(', ')}`);
  const q = parseWith(listQuery, value, '');
  return {
    limit: q.limit,
    ...(q.state ? { state: q.state as TaskState } : {}),
    ...(q.before !== undefined ? { before: q.before } : {}),
    ...(q.model !== undefined ? { model: q.model } : {}),
    ...(q.since !== undefined ? { since: q.since } : {}),
    ...(q.until !== undefined ? { until: q.until } : {}),
  };
}

/** GET /api/v1/jobs/list (SPEC endpoint 3). */
export const listTasks: KeyedOperation = {
  spec: {
    method: 'get',
    path: '/api/v1/jobs/list',
    id: 'listTasks',
    tag: 'Tasks',
    auth: 'key',
    scope: 'tasks:read',
    summary: 'Recent tasks, newest first',
    query: listQuery,
    ok: { schema: S.TaskList, envelope: true, description: 'A page of tasks' },
    errors: ['invalid_request'],
  },
  handler:
    (services) =>
    async ({ principal, query }) => ({ data: await services.tasks.list(principal.accountId, parseListQuery(query)) }),
};
