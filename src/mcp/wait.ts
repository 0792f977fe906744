import { Errors } from '../errors.js';
import type { ToolContext } from './tools.js';

export const WAIT_DEFAULT_SECONDS = 30;
export const WAIT_MAX_SECONDS = 120;
/** How often the database is read while waiting; another process may be the one working the task. */
const POLL_MS = 1_000;
const RANK: Record<string, number> = { waiting: 0, queuing: 1, generating: 2, success: 3, fail: 3 };

/**
 * wait_for_task: reads the task until it is final or the wait runs out. A finish in this process
 * wakes it at once; otherwise it polls, so it also works when another process runs the engine.
 * Progress notifications carry `progress` (percent) plus the state's rank in hundredths, so the
 * value rises with every change of state or percent, as MCP requires.
 */
export async function waitForTask(ctx: ToolContext, taskId: string, timeout: unknown): Promise<Record<string, unknown>> {
  const seconds = timeout ?? WAIT_DEFAULT_SECONDS;
  if (typeof seconds !== 'number' || !Number.isInteger(seconds) || seconds < 1 || seconds > WAIT_MAX_SECONDS) {
    throw Errors.invalid(`timeoutSeconds must be a whole number from 1 to ${WAIT_MAX_SECONDS} (got ${JSON.stringify(timeout)})`);
  }
  const { services, principal, signal } = ctx;
  const end = Date.now() + seconds * 1000;
  let sent = -1;
  for (;;) {
    const task = await services.tasks.get(principal!.accountId, taskId);
    const state = String(task.state);
    const value = Number(task.progress) + (RANK[state] ?? 0) / 100;
    if (value > sent) {
      sent = value;
      await ctx.progress(value, 100, `${state} (${String(task.status)}), ${Number(task.progress)}%`);
    }
    if (state === 'success' || state === 'fail') return { done: true, task };
    const left = end - Date.now();
    if (left <= 0 || signal.aborted) return { done: false, task };
    await new Promise<void>((resolve) => {
      const finished = (id: string) => id === taskId && stop();
      const timer = setTimeout(() => stop(), Math.min(POLL_MS, left));
      const stop = () => {
        clearTimeout(timer);
        services.tasks.signals.off('finished', finished);
        signal.removeEventListener('abort', stop);
        resolve();
      };
      services.tasks.signals.on('finished', finished);
      signal.addEventListener('abort', stop);
    });
  }
}
