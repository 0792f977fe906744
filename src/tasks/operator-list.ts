import type { Database, TaskState } from '../store/index.js';
import { formatUsd } from '../billing/index.js';
import { ACTIVE_STATES } from './states.js';

/** What the operator's task list picks out: tasks past their deadline yet not final, tasks leased by a worker now, tasks moved to a later route. */
export const TASK_FLAGS = ['stuck', 'leased', 'failed_over'] as const;
export type TaskFlag = (typeof TASK_FLAGS)[number];

export interface OperatorTaskQuery {
  limit: number;
  accountId?: string;
  state?: TaskState;
  model?: string;
  flag?: TaskFlag;
  since?: number;
  until?: number;
  before?: number;
}

/** One task as the operator sees it: the customer's view's facts plus the engine's bookkeeping. */
export interface OperatorTask {
  taskId: string;
  accountId: string;
  model: string;
  state: TaskState;
  createTime: number;
  updateTime: number;
  completeTime: number | null;
  price: string;
  priceMicros: number;
  refunded: boolean;
  failCode: number | null;
  failMsg: string | null;
  backend: string;
  routeIndex: number;
  attempts: number;
  lastError: string | null;
  lockedBy: string | null;
  lockedUntil: number | null;
  deadlineAt: number;
  stuck: boolean;
  leased: boolean;
  failedOver: boolean;
}

const COLUMNS = [
  'seq',
  'id',
  'account_id',
  'model',
  'state',
  'created_at',
  'updated_at',
  'completed_at',
  'final_micros',
  'refunded',
  'fail_code',
  'fail_msg',
  'backend',
  'route_index',
  'attempts',
  'last_error',
  'locked_by',
  'locked_until',
  'deadline_at',
] as const;

/**
 * Every account's tasks, newest first, keyset-paged by the sequence number like GET /jobs/list,
 * with the operator's filters: account, state, model, creation time and one flag.
 */
export async function listAllTasks(database: Database, q: OperatorTaskQuery, now: number): Promise<{ items: OperatorTask[]; nextBefore: number | null }> {
  let query = database.db.selectFrom('tasks').select(COLUMNS);
  if (q.accountId !== undefined) query = query.where('account_id', '=', q.accountId);
  if (q.state) query = query.where('state', '=', q.state);
  if (q.model !== undefined) query = query.where('model', '=', q.model);
  if (q.since !== undefined) query = query.where('created_at', '>=', q.since);
  if (q.until !== undefined) query = query.where('created_at', '<', q.until);
  if (q.before !== undefined) query = query.where('seq', '<', q.before);
  if (q.flag === 'stuck') query = query.where('state', 'in', [...ACTIVE_STATES]).where('deadline_at', '<', now);
  if (q.flag === 'leased') query = query.where('state', 'in', [...ACTIVE_STATES]).where('locked_until', '>', now);
  if (q.flag === 'failed_over') query = query.where('route_index', '>', 0);
  const rows = await query
    .orderBy('seq', 'desc')
    .limit(q.limit + 1)
    .execute();
  const page = rows.slice(0, q.limit);
  return {
    items: page.map((r) => {
      const active = ACTIVE_STATES.includes(r.state);
      const lockedUntil = r.locked_until === null ? null : Number(r.locked_until);
      return {
        taskId: r.id,
        accountId: r.account_id,
        model: r.model,
        state: r.state,
        createTime: Number(r.created_at),
        updateTime: Number(r.updated_at),
        completeTime: r.completed_at === null ? null : Number(r.completed_at),
        price: formatUsd(Number(r.final_micros), 6),
        priceMicros: Number(r.final_micros),
        refunded: Boolean(Number(r.refunded)),
        failCode: r.fail_code === null ? null : Number(r.fail_code),
        failMsg: r.fail_msg,
        backend: r.backend,
        routeIndex: Number(r.route_index),
        attempts: Number(r.attempts),
        lastError: r.last_error,
        lockedBy: r.locked_by,
        lockedUntil,
        deadlineAt: Number(r.deadline_at),
        stuck: active && Number(r.deadline_at) < now,
        leased: active && lockedUntil !== null && lockedUntil > now,
        failedOver: Number(r.route_index) > 0,
      };
    }),
    nextBefore: rows.length > q.limit ? Number(page[page.length - 1]!.seq) : null,
  };
}
