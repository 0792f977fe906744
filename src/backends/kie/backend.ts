import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { boundedCache } from '../../cache.js';
import { KIE_SUNO, OUTPUT_OF_KIND } from '../../catalog/index.js';
import type { Files } from '../../files/index.js';
import { NetError } from '../../net/index.js';
import { BackendFailure, type Backend, type BackendJob, type BackendOutput, type BackendStatus, type CancelOutcome, type OutputFile } from '../types.js';
import { DoneRecords, type JsonResponse, type UpstreamOptions } from '../upstream/index.js';
import { applyMap, obj, str, strings, transient } from '../upstream/util.js';
import { kieAccount } from './credit.js';
import { answerCode, answerMsg, createTrouble, createdTaskId, failedKind } from './failures.js';
import { kieInput, pickRow, sunoBody } from './input.js';
import { uploadToKie } from './media.js';

/** kie.ai's API and upload host (KIE.md §3, §6). */
export const DEFAULT_BASE_URL = 'https://api.kie.ai';
export const DEFAULT_UPLOAD_URL = 'https://kieai.redpandaai.co';

/** What the kie adapter needs besides the common options: our files, to upload the input's media. */
export interface KieOptions extends UpstreamOptions {
  readonly files: Files;
}

/** Suno record-info statuses (KIE.md §3) that are still on their way, with a progress figure. */
const SUNO_RUNNING: Readonly<Record<string, number>> = { TEXT_SUCCESS: 40, FIRST_SUCCESS: 70 };
const SUNO_FAILED = new Set(['CREATE_TASK_FAILED', 'GENERATE_AUDIO_FAILED', 'SENSITIVE_WORD_ERROR']);

/**
 * kie.ai as an upstream (DECISIONS §19, KIE.md §6): a GenGate model goes to its kie.ai id with
 * kie.ai's input names (the shared table read backwards, ./input.ts), its media uploaded to kie.ai's
 * upload host first; jobs through `jobs/createTask` + `jobs/recordInfo`, suno-v6 through kie.ai's
 * Suno endpoints; results downloaded at once (through `common/download-url` when refused). kie.ai
 * takes no idempotency key (`idempotentSubmit` false) and has no cancel. Its credit is read for the
 * route's health and `min_credit`.
 */
export class KieBackend implements Backend {
  readonly name: string;
  readonly idempotentSubmit = false;
  readonly notices = true;
  /** A finished record from progress, for the results call that follows (one status read fewer per task). */
  private readonly done = new DoneRecords<Record<string, unknown>>();
  readonly account;
  private readonly headers: Record<string, string>;
  private readonly uploads = boundedCache<string, Map<string, string>>(1000);

  constructor(private readonly opts: KieOptions) {
    this.name = opts.name;
    this.headers = { authorization: `Bearer ${opts.apiKey}` };
    this.account = kieAccount(opts.http, opts.baseUrl, opts.apiKey, opts.minCredit);
  }

  async submit(job: BackendJob): Promise<string> {
    const { http, baseUrl, files, tmpDir } = this.opts;
    const known = this.uploads.get(job.taskId) ?? new Map<string, string>();
    this.uploads.set(job.taskId, known);
    const target = { http, uploadUrl: this.opts.uploadUrl ?? DEFAULT_UPLOAD_URL, headers: this.headers, tmpDir, folder: 'gengate' };
    const suno = this.isSuno(job);
    const sent = job.sent ?? {};
    // as_is (decision 3303): the model's inputs are kie.ai's own names, sent as validated.
    const row = suno || this.opts.asIs ? undefined : pickRow(this.opts.upstreamModel, job.model, job.input, sent.model);
    const mapped = suno ? sunoBody(job.input, job.webhookUrl) : this.opts.asIs ? { ...job.input } : kieInput(row, job.input, sent);
    const input = applyMap(await uploadToKie(mapped, files, target, known), this.opts.map);
    const url = suno ? `${baseUrl}/api/v1/generate` : `${baseUrl}/api/v1/jobs/createTask`;
    const body = suno ? input : { model: row?.name ?? this.opts.upstreamModel, input, ...(job.webhookUrl ? { callBackUrl: job.webhookUrl } : {}) };
    let res: JsonResponse;
    try {
      res = await http.json('POST', url, { headers: this.headers, body });
    } catch (e) {
      throw createTrouble(e, `kie.ai ${suno ? 'generate' : 'createTask'}`);
    }
    return createdTaskId(res);
  }

  async progress(job: BackendJob, ref: string): Promise<BackendStatus> {
    if (this.isSuno(job)) {
      const data = await this.read(`/api/v1/generate/record-info?taskId=${encodeURIComponent(ref)}`);
      const status = String(data.status ?? '');
      if (status === 'PENDING') return { state: 'queued' };
      if (status in SUNO_RUNNING) return { state: 'running', progress: SUNO_RUNNING[status]! };
      if (status === 'SUCCESS' || (status === 'CALLBACK_EXCEPTION' && sunoTracks(data).length > 0)) return { state: 'done' };
      const msg = `kie.ai Suno: ${str(data.errorMessage) || status || 'the task failed'}`;
      if (SUNO_FAILED.has(status) || status === 'CALLBACK_EXCEPTION')
        return { state: 'failed', kind: status === 'SENSITIVE_WORD_ERROR' ? 'content' : failedKind(data.errorCode, msg), message: msg };
      throw new Error(`kie.ai Suno reported an unknown status ${JSON.stringify(status)}`);
    }
    const task = await this.read(`/api/v1/jobs/recordInfo?taskId=${encodeURIComponent(ref)}`);
    switch (task.state) {
      case 'waiting':
      case 'queuing':
        return { state: 'queued' };
      case 'generating':
        return { state: 'running', ...(typeof task.progress === 'number' ? { progress: task.progress } : {}) };
      case 'success':
        this.done.keep(ref, task);
        return { state: 'done' };
      case 'fail': {
        const msg = str(task.failMsg) || 'the task failed';
        return { state: 'failed', kind: failedKind(task.failCode, msg), message: `kie.ai: ${msg}` };
      }
      default:
        throw new Error(`kie.ai reported an unknown state ${JSON.stringify(task.state)}`);
    }
  }

  async results(job: BackendJob, ref: string): Promise<BackendOutput> {
    let links: string[];
    if (this.isSuno(job)) links = sunoTracks(await this.read(`/api/v1/generate/record-info?taskId=${encodeURIComponent(ref)}`));
    else {
      const task = this.done.take(ref) ?? (await this.read(`/api/v1/jobs/recordInfo?taskId=${encodeURIComponent(ref)}`));
      if (task.state !== 'success') throw new Error(`the kie.ai task is ${String(task.state)}, not success`);
      links = resultUrls(task.resultJson);
    }
    const want = OUTPUT_OF_KIND[job.kind].files;
    if (links.length < want) throw new BackendFailure('generation', `kie.ai returned ${links.length} result link(s), expected ${want}`);
    const files: OutputFile[] = [];
    try {
      for (const [i, url] of links.slice(0, want).entries()) files.push(await this.fetch(url, `${job.taskId}-${i + 1}`, OUTPUT_OF_KIND[job.kind].mime));
    } catch (e) {
      await Promise.all(files.map((f) => rm(f.path, { force: true })));
      throw e;
    }
    return { files };
  }

  /** kie.ai documents no way to cancel a task (jobs or Suno): it runs on and is billed. */
  cancel(_job: BackendJob, _ref: string): Promise<CancelOutcome> {
    return Promise.resolve('not-cancellable');
  }

  /** kie.ai's Suno API refuses a generate without `callBackUrl` (issue 36); its jobs API takes one optionally. */
  needsCallback(job: BackendJob): boolean {
    return this.isSuno(job);
  }

  private isSuno(job: BackendJob): boolean {
    return job.model === KIE_SUNO.model;
  }

  /** A read of kie.ai's record; transient trouble throws a plain Error (the engine asks again), an unknown task is a definite failure. */
  private async read(pathAndQuery: string): Promise<Record<string, unknown>> {
    let res: JsonResponse;
    try {
      res = await this.opts.http.json('GET', `${this.opts.baseUrl}${pathAndQuery}`, { headers: this.headers });
    } catch (e) {
      if (e instanceof NetError) throw new Error(`kie.ai record: ${e.message}`, { cause: e });
      throw e;
    }
    const code = answerCode(res);
    if (code === 404) throw new BackendFailure('unavailable', `kie.ai no longer knows the task (${answerMsg(res)})`);
    const data = (res.data as { data?: unknown } | undefined)?.data;
    if (code !== 200 || !data || typeof data !== 'object') throw transient('kie.ai record', res.status, res.text);
    return data as Record<string, unknown>;
  }

  /**
   * Downloads one result through the guard at once (kie.ai's links expire). A refused direct
   * download (an HTTP error status) is asked again through `POST /api/v1/common/download-url`,
   * which answers a fresh link; network trouble is transient (the engine asks again).
   */
  private async fetch(url: string, label: string, fallbackMime: string): Promise<OutputFile> {
    const { http, tmpDir, baseUrl } = this.opts;
    const dest = path.join(tmpDir, `${label}-${randomBytes(6).toString('hex')}`);
    const got = await http.download(url, dest).catch(async (e: unknown) => {
      if (!(e instanceof NetError) || e.status === undefined) throw e;
      const res = await http.json('POST', `${baseUrl}/api/v1/common/download-url`, { headers: this.headers, body: { url } });
      const link = (res.data as { data?: unknown } | undefined)?.data;
      if (answerCode(res) === 200 && typeof link === 'string' && link) return http.download(link, dest);
      if (e.status === 404 || e.status === 410) throw new BackendFailure('generation', `kie.ai's result is gone (HTTP ${e.status}) before it could be copied`);
      throw new Error(`kie.ai's result could not be downloaded (HTTP ${e.status}) and common/download-url answered ${answerCode(res)}: ${answerMsg(res)}`);
    });
    return { path: dest, mime: got.mime && got.mime !== 'application/octet-stream' ? got.mime : fallbackMime };
  }
}

/** The links of kie.ai's resultJson: a JSON string (KIE.md §4.1) or, leniently, an object, with `resultUrls`. */
export function resultUrls(resultJson: unknown): string[] {
  let r: unknown = resultJson;
  if (typeof r === 'string') {
    try {
      r = JSON.parse(r);
    } catch {
      throw new BackendFailure('internal', 'kie.ai returned a resultJson that is not JSON');
    }
  }
  return strings(obj(r).resultUrls);
}

/** The track links of a Suno record: `response.sunoData[].audioUrl`. */
export function sunoTracks(data: Record<string, unknown>): string[] {
  const list = obj(data.response).sunoData;
  return Array.isArray(list) ? list.map((t) => str(obj(t).audioUrl) ?? '').filter((u) => u.length > 0) : [];
}

/** The factory the route registry uses. */
export function createKieBackend(opts: KieOptions): Backend {
  return new KieBackend(opts);
}
