/** The request side of the task lifecycle: create, read, list, the state table and the compare-and-set transition (the worker side is engine/). */
export { Tasks, TaskSignals, type ListQuery } from './tasks.js';
export { MAX_IDEMPOTENCY_KEY } from './idempotency.js';
export { callBackUrl } from './create.js';
export {
  STATES,
  ACTIVE_STATES,
  STATUS_OF,
  TRANSITIONS,
  canMove,
  failureCode,
  TASK_TIMEOUT_MS,
  FILE_RETENTION_MS,
  IDEMPOTENCY_TTL_MS,
  type TaskState,
} from './states.js';
export { taskView, TASK_VIEW_COLUMNS, type TaskRow, type ViewOptions, type StoredResult, callbackView } from './view.js';
export { moveTask } from './transition.js';
export { sunoCallback, sunoView, sunoStatus, SUNO_ORIGIN, SUNO_STATUS, SUNO_FAILURE } from './suno.js';
export { jobOf } from './job.js';
export { waitForTask, Waiters } from './waiters.js';
export { callbackDueThen, finishedSignals } from './finished.js';
export { type Cancelled } from './cancel.js';
export { listAllTasks, TASK_FLAGS, type TaskFlag, type OperatorTask, type OperatorTaskQuery } from './operator-list.js';
