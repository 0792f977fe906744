import type { KeyedOperation } from '../operation.js';
import * as S from '../schemas.js';
import { readTaskId, recordInfoQuery } from './record-info.js';

/** The body of POST /jobs/cancel: recordInfo's one rule for a taskId (readTaskId enforces it); the MCP tool cancel_task takes the same argument. */
export const cancelBody = recordInfoQuery;

/** POST /api/v1/jobs/cancel (DECISIONS §22, decision 1901). */
export const cancelTask: KeyedOperation = {
  spec: {
    method: 'post',
    path: '/api/v1/jobs/cancel',
    id: 'cancelTask',
    tag: 'Tasks',
    auth: 'key',
    scope: 'tasks:write',
    summary: 'Cancel a task',
    description:
      'A task still waiting in GenGate fails at once with failCode 499 (error.type cancelled) and is refunded in full. A task already handed to a backend (queuing, generating) is cancelled there first: only when the backend confirms is it failed and refunded; otherwise the answer is 409 and the task runs on. A final task is 409. A callBackUrl is called as for any failure.',
    body: cancelBody,
    ok: { schema: S.TaskCancelled, envelope: true, description: 'The task is cancelled: failed with failCode 499 and refunded in full' },
    errors: ['task_not_found', 'not_cancellable', 'missing_field', 'invalid_request'],
  },
  handler:
    (services) =>
    async ({ principal, body }) => ({ data: await services.tasks.cancel(principal.accountId, readTaskId(body, 'body')) }),
};
