import type { TaskState } from '../store/index.js';
import type { FailKind } from '../backends/index.js';

export type { TaskState };

/** DECISIONS §6: the alias (`status`) of each state. */
export const STATUS_OF: Readonly<Record<TaskState, 'pending' | 'processing' | 'completed' | 'failed'>> = {
  waiting: 'pending',
  queuing: 'pending',
  generating: 'processing',
  success: 'completed',
  fail: 'failed',
};

export const STATES: readonly TaskState[] = ['waiting', 'queuing', 'generating', 'success', 'fail'];
/** States the engine still works on. */
export const ACTIVE_STATES: readonly TaskState[] = ['waiting', 'queuing', 'generating'];

/** Every allowed move, in one table: forward only, steps may be skipped, final states never move. */
export const TRANSITIONS: Readonly<Record<TaskState, readonly TaskState[]>> = {
  waiting: ['queuing', 'generating', 'success', 'fail'],
  queuing: ['generating', 'success', 'fail'],
  generating: ['success', 'fail'],
  success: [],
  fail: [],
};

export function canMove(from: TaskState, to: TaskState): boolean {
  return TRANSITIONS[from].includes(to);
}

/** SPEC "Task failures": failCode and error.type of each kind of failure, in one exhaustive switch. */
export function failureCode(kind: FailKind): { code: number; type: string } {
  switch (kind) {
    case 'content':
      return { code: 400, type: 'nsfw_content_detected' };
    case 'safety':
      return { code: 400, type: 'invalid_request_error' };
    case 'rejected':
      return { code: 422, type: 'invalid_request_error' };
    case 'generation':
      return { code: 501, type: 'server_error' };
    case 'timeout':
      return { code: 504, type: 'timeout_error' };
    case 'unavailable':
      return { code: 503, type: 'server_error' };
    case 'internal':
      return { code: 500, type: 'server_error' };
    case 'cancelled':
      // DECISIONS §22 (decision 1901): 499, the status clients know as "the client closed the request".
      return { code: 499, type: 'cancelled' };
    default: {
      const never: never = kind;
      throw new Error(`unknown failure kind ${String(never)}`);
    }
  }
}

/** SPEC Limits and DECISIONS §6, §8, §9: fixed by the interface, not settings. */
export const TASK_TIMEOUT_MS = 20 * 60_000;
export const FILE_RETENTION_MS = 24 * 3_600_000;
export const IDEMPOTENCY_TTL_MS = 24 * 3_600_000;
export const DAY_MS = 24 * 3_600_000;
