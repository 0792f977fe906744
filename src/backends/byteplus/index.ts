import { BackendFailure, type Backend, type BackendJob, type BackendOutput, type BackendStatus, type OutputFile } from '../types.js';
import type { JsonResponse } from '../upstream/http.js';
import type { UpstreamOptions } from '../upstream/types.js';
import { cancelOutcome, checkMap, fetchAll, fetchResult, num, obj, str, transient } from '../upstream/util.js';
import { imageRequest, kindOfError, videoTask } from './input.js';

/** ModelArk's API host for the Asia-Pacific region, where the Seedance models run; other regions by the route's base_url. */
export const DEFAULT_BASE_URL = 'https://ark.ap-southeast.bytepluses.com';

const TASKS = '/api/v3/contents/generations/tasks';
const IMAGES = '/api/v3/images/generations';
/** Seedream answers synchronously with the finished image, which can take a while. */
const IMAGE_CALL_MS = 180_000;
const IMAGE_REF = 'image:';

/** ModelArk's error object of an answer: `{ error: { code, message } }`. */
function errorOf(res: JsonResponse): { code: string; message: string } {
  const e = obj(obj(res.data).error);
  return { code: str(e.code) ?? '', message: str(e.message) ?? res.text.slice(0, 300) };
}

/** A refusal of a create call that NotAccepted did not cover (400, 422 and the like): a definite failure. */
function refusal(res: JsonResponse): BackendFailure {
  const { code, message } = errorOf(res);
  return new BackendFailure(kindOfError(code, message, 'rejected'), `BytePlus refused the job (HTTP ${res.status}${code ? ` ${code}` : ''}): ${message}`);
}

/**
 * BytePlus ModelArk (DECISIONS §16): Seedance video as asynchronous tasks (create, poll, delete to
 * cancel a queued task, callback_url for the completion notice) and Seedream images, which the
 * API answers synchronously. ModelArk documents no idempotency key, so submit is not idempotent.
 */
export function createBytePlusBackend(opts: UpstreamOptions): Backend {
  checkMap(opts.map, opts.name);
  const base = opts.baseUrl.replace(/\/+$/, '');
  const auth = { authorization: `Bearer ${opts.apiKey}` };
  const http = opts.http;

  async function getTask(ref: string): Promise<Record<string, unknown>> {
    const res = await http.json('GET', `${base}${TASKS}/${encodeURIComponent(ref)}`, { headers: auth });
    if (res.status === 404) throw new BackendFailure('unavailable', `BytePlus no longer knows task ${ref}`);
    if (res.status < 200 || res.status > 299) throw transient(`BytePlus task ${ref}`, res.status, res.text);
    const data = obj(res.data);
    if (typeof data.status !== 'string') throw new Error(`BytePlus task ${ref}: unreadable answer: ${res.text.slice(0, 200)}`);
    return data;
  }

  async function submitVideo(job: BackendJob): Promise<string> {
    const res = await http.create('POST', `${base}${TASKS}`, { headers: auth, body: videoTask(job, opts.upstreamModel, opts.map) });
    if (res.status < 200 || res.status > 299) throw refusal(res);
    const id = str(obj(res.data).id);
    // Accepted but unreadable: the task may exist upstream, so this is not a NotAccepted.
    if (!id) throw new Error(`BytePlus accepted the task but its answer has no id: ${res.text.slice(0, 200)}`);
    return id;
  }

  async function submitImage(job: BackendJob): Promise<string> {
    const res = await http.create('POST', `${base}${IMAGES}`, {
      headers: auth,
      body: imageRequest(job, opts.upstreamModel, opts.map),
      timeoutMs: IMAGE_CALL_MS,
    });
    if (res.status < 200 || res.status > 299) throw refusal(res);
    const first = obj((obj(res.data).data as unknown[] | undefined)?.[0]);
    const failed = obj(first.error);
    if (str(failed.code) || str(failed.message)) {
      const code = str(failed.code) ?? '';
      throw new BackendFailure(kindOfError(code, str(failed.message) ?? '', 'generation'), `BytePlus made no image (${code}): ${str(failed.message) ?? ''}`);
    }
    const url = str(first.url);
    if (!url) throw new Error(`BytePlus answered without an image link: ${res.text.slice(0, 200)}`);
    return `${IMAGE_REF}${url}`;
  }

  return {
    name: opts.name,
    idempotentSubmit: false,
    notices: true,

    submit(job) {
      return job.kind === 'image' ? submitImage(job) : submitVideo(job);
    },

    async progress(job, ref): Promise<BackendStatus> {
      if (ref.startsWith(IMAGE_REF)) return { state: 'done' };
      const task = await getTask(ref);
      switch (task.status) {
        case 'queued':
          return { state: 'queued' };
        case 'running':
          return { state: 'running' };
        case 'succeeded':
          return { state: 'done' };
        case 'expired':
          return { state: 'failed', kind: 'timeout', message: 'BytePlus expired the task before it finished' };
        case 'cancelled':
          return { state: 'failed', kind: 'unavailable', message: 'the task was cancelled at BytePlus' };
        case 'failed': {
          const e = obj(task.error);
          const code = str(e.code) ?? '';
          const message = str(e.message) ?? 'no reason given';
          return {
            state: 'failed',
            kind: kindOfError(code, message, 'generation'),
            message: `BytePlus failed the task${code ? ` (${code})` : ''}: ${message}`,
          };
        }
        default:
          throw new Error(`BytePlus task ${ref}: unknown status ${String(task.status)}`);
      }
    },

    async results(job, ref): Promise<BackendOutput> {
      if (ref.startsWith(IMAGE_REF)) {
        return { files: [await fetchResult(http, ref.slice(IMAGE_REF.length), opts.tmpDir, `${job.taskId}-image`, 'image/jpeg')] };
      }
      const task = await getTask(ref);
      const content = obj(task.content);
      const video = str(content.video_url);
      if (task.status !== 'succeeded' || !video) throw new Error(`BytePlus task ${ref} has no video yet (status ${String(task.status)})`);
      const frameUrl = str(content.last_frame_url);
      const got = await fetchAll(
        http,
        [
          { url: video, label: `${job.taskId}-video`, mime: 'video/mp4' },
          ...(frameUrl ? [{ url: frameUrl, label: `${job.taskId}-frame`, mime: 'image/png' }] : []),
        ],
        opts.tmpDir,
      );
      const lastFrame: OutputFile | undefined = got[1];
      const seconds = num(task.duration);
      return { files: [got[0]!], ...(seconds !== undefined && seconds > 0 ? { durationSeconds: seconds } : {}), ...(lastFrame ? { lastFrame } : {}) };
    },

    async cancel(_job, ref) {
      // A Seedream image was made during the submit call: there is nothing left to stop.
      if (ref.startsWith(IMAGE_REF)) return 'not-cancellable';
      // ModelArk's DELETE cancels a queued task, is refused for a running one (it finishes, and is
      // billed, whatever we ask) and deletes the record of a finished one: so the status is read first.
      let status: unknown;
      try {
        status = (await getTask(ref)).status;
      } catch {
        return 'unknown';
      }
      if (status === 'cancelled') return 'cancelled';
      if (status !== 'queued') return 'not-cancellable';
      return cancelOutcome(
        () => http.json('DELETE', `${base}${TASKS}/${encodeURIComponent(ref)}`, { headers: auth }),
        (res) => {
          if (res.status >= 200 && res.status <= 299) return 'cancelled';
          // InvalidAction.TaskNotCancellable: it started running since the look.
          if (res.status === 400 || res.status === 409 || /NotCancellable/i.test(errorOf(res).code)) return 'not-cancellable';
          return 'unknown';
        },
      );
    },
  };
}
