import { z } from 'zod';
import { dashboardSeries } from '../dashboard/index.js';
import { parseWith } from '../errors.js';
import { listAllTasks, STATES, TASK_FLAGS, type TaskFlag, type TaskState } from '../tasks/index.js';
import { Member } from './auth/operation.js';
import type { AdminCall, AdminOperation } from './admin.js';

/** Reads for the operator's console pages (decision 2002): every account's tasks, the dashboard's per-minute figures, an account's members. */

const whole = (min: number, max: number) =>
  z
    .union([z.number(), z.string().regex(/^\d{1,16}$/, `must be a whole number from ${min} to ${max}`)])
    .transform(Number)
    .pipe(z.number().int().min(min).max(max));

export const adminTasksQuery = z
  .object({
    limit: whole(1, 100).default(20).describe('Page size, 1 to 100'),
    accountId: z.string().min(1).max(100).optional().describe("Only this account's tasks"),
    state: z
      .enum(STATES as [string, ...string[]], { error: `must be one of ${STATES.join(', ')}` })
      .optional()
      .describe('Only tasks in this state'),
    model: z.string().min(1).max(200).optional().describe('Only tasks of this model (canonical id)'),
    flag: z
      .enum(TASK_FLAGS, { error: `must be one of ${TASK_FLAGS.join(', ')}` })
      .optional()
      .describe('stuck: not final and past its deadline; leased: held by a worker now; failed_over: moved to a later route'),
    since: whole(0, Number.MAX_SAFE_INTEGER).optional().describe('Created at or after (Unix ms)'),
    until: whole(0, Number.MAX_SAFE_INTEGER).optional().describe('Created before (Unix ms)'),
    before: whole(1, Number.MAX_SAFE_INTEGER).optional().describe('The nextBefore of the previous page'),
  })
  .strict();

export const adminDashboardQuery = z.object({ minutes: whole(5, 1440).default(60).describe('How many minutes back, 5 to 1440 (default 60)') }).strict();

const n = z.array(z.number().int());
const OperatorTask = z.object({
  taskId: z.string(),
  accountId: z.string(),
  model: z.string(),
  state: z.enum(STATES as [string, ...string[]]),
  createTime: z.number().int(),
  updateTime: z.number().int(),
  completeTime: z.number().int().nullable(),
  price: z.string().describe('The charge in USD (exact, 6 decimals)'),
  priceMicros: z.number().int(),
  refunded: z.boolean(),
  failCode: z.number().int().nullable(),
  failMsg: z.string().nullable(),
  backend: z.string(),
  routeIndex: z.number().int().describe('Position in the model routes; above 0 after a fail-over'),
  attempts: z.number().int(),
  lastError: z.string().nullable(),
  lockedBy: z.string().nullable().describe('The worker holding the lease'),
  lockedUntil: z.number().int().nullable(),
  deadlineAt: z.number().int(),
  stuck: z.boolean(),
  leased: z.boolean(),
  failedOver: z.boolean(),
});
const OperatorTaskPage = z.object({ items: z.array(OperatorTask), nextBefore: z.number().int().nullable() });
const Dashboard = z.object({
  minutes: n.describe('Start of each one-minute bucket (Unix ms)'),
  tasks: z.object({ created: n, succeeded: n, failed: n }),
  failuresByCode: z.record(z.string(), n),
  inFlight: n.describe('Tasks not final at the end of each minute'),
  now: z.object({ waiting: z.number().int(), queuing: z.number().int(), generating: z.number().int() }),
  active: z
    .array(z.object({ model: z.string(), routeIndex: z.number().int(), state: z.enum(['waiting', 'queuing', 'generating']), count: z.number().int() }))
    .describe('Tasks not final now per model and route (position from 0): the concurrency in use'),
  callbacks: z.object({ delivered: n, failed: n }).describe('Task callback attempts per minute'),
  money: z.object({ chargedMicros: n, refundedMicros: n }).describe('Micro-USD per minute from the ledger'),
});

const accountIdOf = (call: AdminCall) => String((call.params as { id?: string }).id ?? '');

export function adminViewOperations(base: Omit<AdminOperation['spec'], 'method' | 'path' | 'id' | 'summary' | 'ok'>): AdminOperation[] {
  return [
    {
      spec: {
        ...base,
        method: 'get',
        path: '/admin/v1/tasks',
        id: 'adminListTasks',
        summary:
          "Every account's tasks, newest first, with the engine's bookkeeping (lease, route, attempts) and flags for stuck, leased and failed-over tasks",
        query: adminTasksQuery,
        ok: { schema: OperatorTaskPage, envelope: true, description: 'A page of tasks' },
        errors: ['invalid_request'],
      },
      async handle(s, call) {
        const q = parseWith(adminTasksQuery, call.query, '');
        return {
          data: await listAllTasks(
            s.database,
            {
              limit: q.limit,
              ...(q.accountId !== undefined ? { accountId: q.accountId } : {}),
              ...(q.state !== undefined ? { state: q.state as TaskState } : {}),
              ...(q.model !== undefined ? { model: q.model } : {}),
              ...(q.flag !== undefined ? { flag: q.flag as TaskFlag } : {}),
              ...(q.since !== undefined ? { since: q.since } : {}),
              ...(q.until !== undefined ? { until: q.until } : {}),
              ...(q.before !== undefined ? { before: q.before } : {}),
            },
            s.clock.now(),
          ),
        };
      },
    },
    {
      spec: {
        ...base,
        method: 'get',
        path: '/admin/v1/dashboard',
        id: 'adminDashboard',
        summary:
          'Per-minute figures for the dashboard: tasks created, succeeded and failed, failures by code, tasks in flight, callback outcomes, charges and refunds',
        description: 'Read from the database, so every process of a deployment gives the same figures (decision 2002). Money in integer micro-USD.',
        query: adminDashboardQuery,
        ok: { schema: Dashboard, envelope: true, description: 'The series, oldest minute first' },
        errors: ['invalid_request'],
      },
      async handle(s, call) {
        const q = parseWith(adminDashboardQuery, call.query, '');
        return { data: await dashboardSeries(s.database, s.clock.now(), q.minutes) };
      },
    },
    {
      spec: {
        ...base,
        method: 'get',
        path: '/admin/v1/accounts/:id/members',
        id: 'adminListMembers',
        summary: "The account's members (people who sign in) with their roles",
        params: { id: 'The account id' },
        ok: { schema: z.array(Member), envelope: true, description: 'Members, oldest first' },
      },
      async handle(s, call) {
        const account = await s.accounts.get(accountIdOf(call)); // 404 for an unknown account
        return { data: await s.members.list(account.id) };
      },
    },
  ];
}
