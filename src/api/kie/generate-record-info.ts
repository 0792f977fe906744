import type { KeyedOperation } from '../operation.js';
import * as S from '../schemas.js';
import { readTaskId, recordInfoQuery } from '../tasks/record-info.js';

/** GET /api/v1/generate/record-info: a suno-v6 task in kie.ai's Suno shape (DECISIONS §18, decision 0404). */
export const sunoRecordInfo: KeyedOperation = {
  spec: {
    method: 'get',
    path: '/api/v1/generate/record-info',
    id: 'sunoRecordInfo',
    tag: 'kie.ai compatibility',
    auth: 'key',
    scope: 'tasks:read',
    summary: "One suno-v6 task in kie.ai's Suno shape",
    description:
      'Any suno-v6 task of the account (made through /api/v1/generate or createTask); other tasks answer 404 (read them with /api/v1/jobs/recordInfo). The status mapping is in the schema of `status`.',
    query: recordInfoQuery,
    ok: { schema: S.SunoRecord, envelope: true, description: 'The task' },
    errors: ['task_not_found', 'missing_field', 'invalid_request'],
  },
  handler:
    (services) =>
    async ({ principal, query }) => ({ data: await services.tasks.sunoInfo(principal.accountId, readTaskId(query, 'rest')) }),
};
