import { z } from 'zod';
import { Errors } from '../../errors.js';
import { okJson } from '../envelope.js';
import type { KeyedOperation } from '../operation.js';
import * as S from '../schemas.js';

/** SPEC endpoint 2 query (GET /jobs/recordInfo); the MCP tools get_task and wait_for_task take the same argument. */
export const recordInfoQuery = z.object({
  taskId: z.string().min(1).describe('The taskId createTask returned'),
});

/** How each face words a refusal of taskId (a query parameter may be repeated; a tool argument may have any JSON type). */
const WORDING = {
  rest: { hint: 'pass ?taskId=<the taskId createTask returned>', wrong: 'must be given once' },
  body: { hint: 'send the JSON body {"taskId": "<the taskId createTask returned>"}', wrong: 'must be a string' },
  mcp: { hint: 'pass the taskId create_task returned', wrong: 'must be a string' },
};

/** The taskId of a recordInfo query or a tool's arguments: recordInfoQuery decides, the message speaks the face's language. */
export function readTaskId(args: unknown, face: keyof typeof WORDING): string {
  const parsed = recordInfoQuery.safeParse(args ?? {});
  if (parsed.success) return parsed.data.taskId;
  const taskId = args && typeof args === 'object' ? (args as Record<string, unknown>).taskId : undefined;
  if (taskId === undefined || taskId === '') throw Errors.missingField('taskId', WORDING[face].hint);
  throw Errors.invalid(`taskId ${WORDING[face].wrong} (got ${JSON.stringify(taskId)})`);
}

/** GET /api/v1/jobs/recordInfo (SPEC endpoint 2). */
export const recordInfo: KeyedOperation = {
  spec: {
    method: 'get',
    path: '/api/v1/jobs/recordInfo',
    id: 'recordInfo',
    tag: 'Tasks',
    auth: 'key',
    scope: 'tasks:read',
    summary: 'One task',
    query: recordInfoQuery,
    ok: { schema: S.Task, envelope: true, description: 'The task' },
    errors: ['task_not_found', 'missing_field', 'invalid_request'],
  },
  // The view is JSON text already (often kept from an earlier read): sent in the envelope as is.
  handler:
    (services) =>
    async ({ principal, query }) => ({ text: okJson(await services.tasks.viewJson(principal.accountId, readTaskId(query, 'rest'))) }),
};
