import { NetError, type NetGuard } from '../net/index.js';
import type { CallbacksTable } from '../store/index.js';
import { SUNO_ORIGIN, sunoCallback, taskView, type TaskRow, type ViewOptions } from '../tasks/index.js';
import { signatureHeaders, type SigningKeys } from './signing.js';

/** What one attempt came to: delivered, or why not, and how long it took. */
export interface Attempt {
  ok: boolean;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
}

/** One signed POST to make. `subject`: the task id (an event's id for account events), signed by the older scheme. */
export interface Delivery {
  url: string;
  keys: SigningKeys;
  webhookId: string;
  subject: string;
  body: string;
  at: Date;
}

/** DECISIONS §14: the body existing handlers of this API family parse; `data` is the recordInfo Task plus `callbackType` (kie.ai's Suno shape for Suno tasks). */
export function callbackBody(task: TaskRow, callback: CallbacksTable, view: ViewOptions): { taskId: string; body: string } {
  // A task made through kie.ai's Suno endpoint is called back in kie.ai's Suno shape (decision 0404), signed the same way.
  if (task.origin === SUNO_ORIGIN) return { taskId: task.id, body: JSON.stringify(sunoCallback(task, view)) };
  const success = task.state === 'success';
  const data = { ...taskView(task, callback, view), callbackType: success ? 'task_completed' : 'task_failed' };
  const payload = { code: success ? 200 : 501, msg: success ? 'success' : (task.fail_msg ?? ''), taskId: task.id, data };
  return { taskId: task.id, body: JSON.stringify(payload) };
}

/** The delivery id: stable across retries of one task's callback, so receivers can de-duplicate. */
export function webhookId(taskId: string): string {
  return `msg_${taskId}`;
}

/** POSTs one signed delivery through the network guard. Any 2xx within the timeout is delivery; redirects are not followed. */
export async function attemptDelivery(guard: NetGuard, d: Delivery, timeoutMs: number): Promise<Attempt> {
  const started = performance.now();
  const took = () => Math.round(performance.now() - started);
  const { url, body } = d;
  try {
    const res = await guard.fetch(url, {
      method: 'POST',
      body,
      timeoutMs,
      maxBytes: 64 * 1024,
      headers: {
        'content-type': 'application/json',
        'user-agent': 'GenGate-Callbacks/1',
        ...signatureHeaders(d.keys, d.webhookId, d.subject, body, d.at),
      },
    });
    if (res.status >= 200 && res.status < 300) return { ok: true, statusCode: res.status, error: null, durationMs: took() };
    if (res.status >= 300 && res.status < 400) {
      const to = res.headers.location ? ` to ${String(res.headers.location).slice(0, 200)}` : '';
      return { ok: false, statusCode: res.status, error: `redirect${to} not followed (HTTP ${res.status})`, durationMs: took() };
    }
    return { ok: false, statusCode: res.status, error: `receiver answered HTTP ${res.status}`, durationMs: took() };
  } catch (e) {
    const message = e instanceof NetError ? e.message : `delivery failed: ${(e as Error).message}`;
    return { ok: false, statusCode: null, error: message.slice(0, 500), durationMs: took() };
  }
}
