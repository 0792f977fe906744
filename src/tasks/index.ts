/** The task lifecycle: create, read, list, the engine that walks tasks through their states, and the state table. */
export { Tasks, TaskSignals, type ListQuery } from './tasks.js';
export { Engine, type EngineLog, type EngineOptions } from './engine.js';
export { readIdempotencyKey, MAX_IDEMPOTENCY_KEY } from './idempotency.js';
export {
  STATES,
  ACTIVE_STATES,
  STATUS_OF,
  TRANSITIONS,
  canMove,
  isFinal,
  failureCode,
  TASK_TIMEOUT_MS,
  FILE_RETENTION_MS,
  IDEMPOTENCY_TTL_MS,
  type TaskState,
} from './states.js';
export { taskView, TASK_VIEW_COLUMNS, type TaskRow, type ViewOptions } from './view.js';
export { connectWakeups, type Wakeups, type WakeupKind } from './wakeups.js';
export { RouteHealth, routesOf, type RouteRef, type RouteHealthView } from './routing.js';
export { Breaker, type BreakerState } from './breaker.js';
export { NOTIFY_PATH } from './submit.js';
