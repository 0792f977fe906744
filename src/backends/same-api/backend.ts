import { OUTPUT_OF_KIND } from '../../catalog/index.js';
import type { Files } from '../../files/index.js';
import { NetError } from '../../net/index.js';
import { applyMap, cancelOutcome, fetchResult, transient } from '../upstream/util.js';
import { DoneRecords, type UpstreamOptions } from '../upstream/index.js';
import {
  BackendFailure,
  type Backend,
  type BackendJob,
  type BackendOutput,
  type BackendStatus,
  type CancelOutcome,
  type FailKind,
  type OutputFile,
} from '../types.js';
import { uploadLinks } from './media.js';
import { boundedCache } from '../../cache.js';

/** What the same-API adapter needs besides the common upstream options: our files, to send uploads on. */
export interface SameApiOptions extends UpstreamOptions {
  readonly files: Files;
}

/** Tasks whose uploads are remembered for a repeated submit; older ones are forgotten first. */
const REMEMBERED_TASKS = 1000;
/** GenGate's refusal of a known Idempotency-Key with another body (src/tasks/idempotency.ts) names the bound task. */
const BOUND_TASK = /^Idempotency-Key "?gengate-[^ ]* was already used with a different request body .*\(task ([A-Za-z0-9_-]{1,200})\)/;

/**
 * Another service speaking the API of SPEC.md (another GenGate, or the original service):
 * uploads our media to its `/api/v1/files/upload`, creates the task with an Idempotency-Key derived
 * from our task id (so submitting twice is safe), follows it through recordInfo, maps its
 * failures back, and downloads the result files and the last frame for re-hosting.
 */
export class SameApiBackend implements Backend {
  readonly name: string;
  readonly idempotentSubmit = true;
  readonly notices = true;
  /** A finished record from progress, for the results call that follows (one status read fewer per task). */
  private readonly done = new DoneRecords<Record<string, unknown>>();
  private readonly headers: Record<string, string>;
  private readonly uploads = boundedCache<string, Map<string, string>>(REMEMBERED_TASKS);

  constructor(private readonly opts: SameApiOptions) {
    this.name = opts.name;
    this.headers = { authorization: `Bearer ${opts.apiKey}` };
  }

  async submit(job: BackendJob): Promise<string> {
    const { http, baseUrl, tmpDir, files } = this.opts;
    const known = this.uploads.get(job.taskId) ?? new Map<string, string>();
    // A draft final arrives merged with its draft (prompt, media, final resolution). Its
    // draft_task_id names a draft of this GenGate, unknown upstream, so the final is sent as a
    // full render of the merged input (docs/backends.md: what that costs the operator).
    const { draft_task_id: _ownDraft, ...input } = job.input;
    const sent = await uploadLinks(input, files, { http, baseUrl, headers: this.headers, tmpDir }, known);
    this.remember(job.taskId, known);
    const body = {
      model: this.opts.upstreamModel,
      input: applyMap(sent, this.opts.map),
      ...(job.webhookUrl ? { callBackUrl: job.webhookUrl } : {}),
    };
    const res = await http.create('POST', `${baseUrl}/api/v1/jobs/createTask`, {
      headers: { ...this.headers, 'idempotency-key': `gengate-${job.taskId}` },
      body,
    });
    const env = envelope(res.data);
    const taskId = env?.data && typeof env.data === 'object' ? (env.data as { taskId?: unknown }).taskId : undefined;
    // The uploaded links stay remembered after success too: the engine may submit again when it could not record the hand-off.
    if (res.status === 200 && typeof taskId === 'string' && taskId.length > 0) return taskId;
    // After a restart the uploads are new links, so the body differs from the first submit; a GenGate
    // upstream then names the task the key is bound to, which is the one we created before.
    const bound = res.status === 400 && typeof env?.msg === 'string' ? BOUND_TASK.exec(env.msg) : null;
    if (bound) return bound[1]!;
    const msg = `the upstream refused the task (HTTP ${res.status}${env?.error ? ` ${env.error}` : ''}): ${env?.msg ?? res.text.slice(0, 300)}`;
    if (res.status === 400) throw new BackendFailure(/nsfw|content/i.test(`${env?.error} ${env?.msg}`) ? 'content' : 'safety', msg);
    if (res.status === 422) throw new BackendFailure('rejected', msg);
    if (res.status === 200) throw new Error(`the upstream answered createTask without a taskId: ${res.text.slice(0, 300)}`);
    throw new BackendFailure('rejected', msg);
  }

  async progress(_job: BackendJob, ref: string): Promise<BackendStatus> {
    const task = await this.record(ref);
    switch (task.state) {
      case 'waiting':
      case 'queuing':
        return { state: 'queued' };
      case 'generating':
        return { state: 'running', progress: typeof task.progress === 'number' ? task.progress : 0 };
      case 'success':
        this.done.keep(ref, task);
        return { state: 'done' };
      case 'fail': {
        const err = (task.error ?? {}) as { type?: unknown };
        return { state: 'failed', kind: failKind(task.failCode, err.type), message: `upstream: ${String(task.failMsg || 'the task failed')}` };
      }
      default:
        throw new Error(`the upstream reported an unknown state ${JSON.stringify(task.state)}`);
    }
  }

  async results(job: BackendJob, ref: string): Promise<BackendOutput> {
    const task = this.done.take(ref) ?? (await this.record(ref));
    if (task.state !== 'success') throw new Error(`the upstream task is ${String(task.state)}, not success`);
    const { urls, duration } = resultLinks(task.resultJson);
    const want = OUTPUT_OF_KIND[job.kind].files;
    if (urls.length !== want) throw new BackendFailure('internal', `the upstream returned ${urls.length} result link(s), expected ${want}`);
    const out: OutputFile[] = [];
    for (const [i, url] of urls.entries())
      out.push(await fetchResult(this.opts.http, url, this.opts.tmpDir, `${job.taskId}-${i + 1}`, OUTPUT_OF_KIND[job.kind].mime));
    const last =
      typeof task.lastFrameUrl === 'string' && task.lastFrameUrl
        ? await fetchResult(this.opts.http, task.lastFrameUrl, this.opts.tmpDir, `${job.taskId}-frame`, 'image/png')
        : undefined;
    return { files: out, ...(duration !== undefined ? { durationSeconds: duration } : {}), ...(last ? { lastFrame: last } : {}) };
  }

  /**
   * POST /api/v1/jobs/cancel of the upstream (DECISIONS §22): 200 means it failed and refunded the task
   * (to us); 409 means it cannot (the task is final there, or its own route could not cancel it); a
   * 404 route (a service without cancel) or a foreign task cannot be cancelled either. Anything else is unclear.
   */
  cancel(_job: BackendJob, ref: string): Promise<CancelOutcome> {
    return cancelOutcome(
      () => this.opts.http.json('POST', `${this.opts.baseUrl}/api/v1/jobs/cancel`, { headers: this.headers, body: { taskId: ref } }),
      (res) => {
        const env = envelope(res.data);
        if (res.status === 200 && env?.code === 200) return 'cancelled';
        if (res.status === 409 || res.status === 404 || res.status === 405) return 'not-cancellable';
        return 'unknown';
      },
    );
  }

  /** recordInfo of the upstream task; transient trouble throws a plain Error (the engine asks again). */
  private async record(ref: string): Promise<Record<string, unknown>> {
    let res;
    try {
      res = await this.opts.http.json('GET', `${this.opts.baseUrl}/api/v1/jobs/recordInfo?taskId=${encodeURIComponent(ref)}`, { headers: this.headers });
    } catch (e) {
      if (e instanceof NetError) throw new Error(`recordInfo: ${e.message}`, { cause: e });
      throw e;
    }
    const env = envelope(res.data);
    if (res.status === 404) throw new BackendFailure('unavailable', `the upstream no longer knows the task ${ref}`);
    if (res.status !== 200 || !env?.data || typeof env.data !== 'object') throw transient('recordInfo', res.status, res.text);
    return env.data as Record<string, unknown>;
  }

  private remember(taskId: string, known: Map<string, string>): void {
    this.uploads.set(taskId, known);
  }
}

interface Envelope {
  code?: unknown;
  msg?: unknown;
  data?: unknown;
  error?: unknown;
}

function envelope(data: unknown): Envelope | null {
  return data && typeof data === 'object' && !Array.isArray(data) ? (data as Envelope) : null;
}

/** The upstream's failCode and error.type back to a FailKind (SPEC "Task failures"). */
export function failKind(code: unknown, type: unknown): FailKind {
  switch (Number(code)) {
    case 400:
      return type === 'nsfw_content_detected' ? 'content' : 'safety';
    case 422:
      return 'rejected';
    case 501:
      return 'generation';
    case 504:
      return 'timeout';
    case 499:
      return 'cancelled';
    case 500:
    case 503:
      return 'unavailable';
    default:
      return 'generation';
  }
}

/** The file links of a resultJson: a JSON string with resultUrls (image, music) or an object with videos[].url (video). */
export function resultLinks(resultJson: unknown): { urls: string[]; duration?: number } {
  let r: unknown = resultJson;
  if (typeof r === 'string') {
    try {
      r = JSON.parse(r);
    } catch {
      throw new BackendFailure('internal', 'the upstream returned a resultJson that is not JSON');
    }
  }
  const o = (r && typeof r === 'object' ? r : {}) as { resultUrls?: unknown; videos?: unknown; duration?: unknown };
  const videos = Array.isArray(o.videos) ? o.videos.map((v) => (v as { url?: unknown })?.url).filter((u): u is string => typeof u === 'string') : [];
  const urls = videos.length > 0 ? videos : Array.isArray(o.resultUrls) ? o.resultUrls.filter((u): u is string => typeof u === 'string') : [];
  const duration = typeof o.duration === 'number' && Number.isFinite(o.duration) ? o.duration : undefined;
  return { urls, ...(duration !== undefined ? { duration } : {}) };
}

/** The factory the route registry uses. */
export function createSameApiBackend(opts: SameApiOptions): Backend {
  return new SameApiBackend(opts);
}
