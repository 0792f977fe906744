/** The worker side of the task lifecycle: claim, fenced leases, step, submit, finish, trims, sweep, routing, breakers, upstream notices, wake-ups and the work loop. */
export { Engine, type EngineLog, type EngineOptions } from './engine.js';
export { connectWakeups, type Wakeups, type WakeupKind } from './wakeups.js';
export { RouteHealth, routesOf, type RouteRef, type RouteHealthView, type RouteDetail } from './routing.js';
export { Breaker, type BreakerState } from './breaker.js';
export { NOTIFY_PATH } from './submit.js';
export { registerEngineMetrics, registerHeldGauge } from './metrics.js';
export { upstreamNotice, taskDue, type NoticeDeps } from './notice.js';
export { ACTIVE_STATE_SQL } from './predicates.js';
