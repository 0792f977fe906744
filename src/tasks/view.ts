import { formatUsd, toRub, usdNumber } from '../billing/index.js';
import type { ModelKind } from '../catalog/index.js';
import type { ApiDialect, CallbacksTable, TasksTable } from '../store/index.js';
import { STATUS_OF } from './states.js';

/** What the engine stores in tasks.result: file ids (links are built when shown, from PUBLIC_BASE_URL). */
export interface StoredResult {
  kind: ModelKind;
  files: Array<{ id: string; name: string }>;
  duration?: number;
  lastFrame?: { id: string; name: string };
}

/** The task row fields a view needs (everything but the engine's bookkeeping). */
export type TaskRow = Pick<
  TasksTable,
  | 'seq'
  | 'id'
  | 'model'
  | 'state'
  | 'param'
  | 'input'
  | 'callback_url'
  | 'final_micros'
  | 'progress'
  | 'result'
  | 'fail_code'
  | 'fail_type'
  | 'fail_msg'
  | 'refunded'
  | 'files_expired'
  | 'created_at'
  | 'updated_at'
  | 'completed_at'
  | 'origin'
> & { seq: number; dialect: ApiDialect };

export const TASK_VIEW_COLUMNS = [
  'seq',
  'id',
  'model',
  'state',
  'param',
  'input',
  'callback_url',
  'final_micros',
  'progress',
  'result',
  'fail_code',
  'fail_type',
  'fail_msg',
  'refunded',
  'files_expired',
  'created_at',
  'updated_at',
  'completed_at',
  'dialect',
  'origin',
] as const;

/** DECISIONS §14: the callback delivery status object. */
export function callbackView(row: CallbacksTable) {
  return {
    url: row.url,
    status: row.status,
    attempts: Number(row.attempts),
    lastAttemptAt: row.last_attempt_at === null ? null : Number(row.last_attempt_at),
    lastStatusCode: row.last_status_code,
    lastError: row.last_error,
    deliveredAt: row.delivered_at === null ? null : Number(row.delivered_at),
  };
}

export interface ViewOptions {
  usdRubRate: number;
  fileUrl(id: string, name: string): string;
}

/** The SPEC "Task" resource (DECISIONS §6, §7) of a task row. */
export function taskView(row: TaskRow, callback: CallbacksTable | null, opts: ViewOptions) {
  const created = Number(row.created_at);
  const completed = row.completed_at === null ? null : Number(row.completed_at);
  const refunded = Number(row.refunded) === 1;
  const finalMicros = Number(row.final_micros);
  const result = row.state === 'success' && row.result ? (JSON.parse(row.result) as StoredResult) : null;
  const failed = row.state === 'fail';
  const view: Record<string, unknown> = {
    taskId: row.id,
    task_id: row.id,
    model: row.model,
    state: row.state,
    status: STATUS_OF[row.state],
    param: row.param,
    resultJson: result ? resultJson(result, row.dialect, opts) : null,
  };
  // Cheap test first: the input is parsed only when it may ask for the last frame.
  if (row.input.includes('"return_last_frame":true') && (JSON.parse(row.input) as Record<string, unknown>).return_last_frame === true) {
    view.lastFrameUrl = result?.lastFrame ? opts.fileUrl(result.lastFrame.id, result.lastFrame.name) : null;
  }
  Object.assign(view, {
    failCode: failed ? Number(row.fail_code) : '',
    failMsg: failed ? (row.fail_msg ?? '') : '',
    error: failed ? { code: Number(row.fail_code), message: row.fail_msg ?? '', type: row.fail_type ?? 'server_error' } : null,
    costTime: completed === null ? null : completed - created,
    createTime: created,
    updateTime: Number(row.updated_at),
    completeTime: completed,
    progress: row.state === 'success' ? 100 : Number(row.progress),
    creditsConsumed: refunded ? 0 : usdNumber(finalMicros),
    costUsd: formatUsd(finalMicros, 3),
    costRub: toRub(finalMicros, opts.usdRubRate),
    refunded,
    filesExpired: Number(row.files_expired) === 1,
    callback: callback ? callbackView(callback) : null,
  });
  return view;
}

/**
 * The one place that decides the shape of `resultJson` (recordInfo, list, callbacks and MCP all show
 * taskView). The SPEC shape (DECISIONS §7): a JSON string `{resultUrls}` for images and music, an
 * object with videos, duration and resultUrls for video. The kie dialect (DECISIONS §18, decision
 * 0402), fixed on the task at creation: a JSON string for every model, for video holding
 * `resultUrls`, `videos` and `duration`, since kie.ai clients JSON.parse it (KIE.md §4.1).
 */
function resultJson(result: StoredResult, dialect: ApiDialect, opts: ViewOptions): string | Record<string, unknown> {
  const urls = result.files.map((f) => opts.fileUrl(f.id, f.name));
  if (result.kind !== 'video') return JSON.stringify({ resultUrls: urls });
  const videos = urls.map((url) => ({ url }));
  const duration = result.duration ?? null;
  if (dialect === 'kie') return JSON.stringify({ resultUrls: urls, videos, duration });
  return { videos, duration, resultUrls: urls };
}
