import { NetError } from '../../net/index.js';
import { BackendFailure, type FailKind } from '../types.js';
import { kindFromText } from '../upstream/util.js';
import { NotAccepted, retryAfterMs, type JsonResponse } from '../upstream/index.js';

/**
 * kie.ai's answers in the spec's words (docs/backends.md "kie.ai"). kie.ai answers with its
 * `{code, msg, data}` envelope, often as HTTP 200 with the real code inside, so the code read is
 * the envelope's when the HTTP status is 200. Its documented codes: 200 success, 401 unauthorized,
 * 402 insufficient credits, 404 not found, 422 validation error, 429 rate limited, 455 service
 * unavailable (maintenance), 500 server error, 501 generation failed, 505 feature disabled.
 */

/** The code of an answer: the HTTP status, or the envelope's code under an HTTP 200. */
export function answerCode(res: JsonResponse): number {
  const code = (res.data as { code?: unknown } | undefined)?.code;
  return res.status === 200 && code !== undefined && Number.isFinite(Number(code)) ? Number(code) : res.status;
}

/** The envelope's message, else an excerpt of the body. */
export function answerMsg(res: JsonResponse): string {
  const body = res.data as { msg?: unknown; message?: unknown } | undefined;
  const msg = typeof body?.msg === 'string' ? body.msg : typeof body?.message === 'string' ? body.message : res.text.slice(0, 200);
  return msg.trim() || `HTTP ${res.status}`;
}

/** Codes of a create that mean kie.ai did not make a task and the route itself cannot now (credentials, credit, rate, maintenance, disabled): retried, then failed over. */
const NOT_TAKEN = new Set([401, 402, 403, 404, 408, 425, 429, 455, 505]);

/**
 * Reads the answer to a create (jobs or Suno): the kie.ai task id, or a throw. NotAccepted when
 * surely no task was made; BackendFailure for a refusal of this task's input; a plain Error when
 * the answer leaves it open (200 without a task id): the engine then does not submit again.
 */
export function createdTaskId(res: JsonResponse): string {
  const code = answerCode(res);
  const msg = answerMsg(res);
  const taskId = (res.data as { data?: { taskId?: unknown } } | undefined)?.data?.taskId;
  if (code === 200 && typeof taskId === 'string' && taskId.length > 0) return taskId;
  if (code === 200) throw new Error(`kie.ai answered the create without a taskId: ${res.text.slice(0, 300)}`);
  if (NOT_TAKEN.has(code) || code >= 500) {
    if (code === 501) throw new BackendFailure('generation', `kie.ai: ${msg}`);
    throw new NotAccepted(`kie.ai answered ${code}: ${msg}`, retryAfterMs(res.headers['retry-after']));
  }
  throw new BackendFailure(kindFromText(msg, 'rejected') === 'content' ? 'content' : 'rejected', `kie.ai refused the task (${code}): ${msg}`);
}

/** Network trouble of a create: before anything was sent (refused, unknown host, refused by the guard) it is surely not taken; otherwise kie.ai may have made the task. */
export function createTrouble(e: unknown, what: string): Error {
  if (!(e instanceof NetError)) return e instanceof Error ? e : new Error(String(e));
  const before = e.code === 'blocked' || e.code === 'bad_url' || /^connection refused|^host name not found/.test(e.message);
  return before ? new NotAccepted(`${what}: ${e.message}`) : new Error(`${what}: ${e.message} (kie.ai may have made the task; it is not created twice)`);
}

/** A failed kie.ai task's failCode and failMsg as a FailKind (SPEC "Task failures"). */
export function failedKind(failCode: unknown, failMsg: string): FailKind {
  const byText = kindFromText(failMsg, 'generation');
  if (byText === 'content') return 'content';
  switch (Number(failCode)) {
    case 400:
      return 'safety';
    case 422:
      return 'rejected';
    case 504:
      return 'timeout';
    case 455:
    case 503:
      return 'unavailable';
    default:
      return byText;
  }
}
