import { BackendFailure, type Backend, type BackendJob, type BackendOutput, type BackendStatus } from '../types.js';
import type { JsonResponse } from '../upstream/http.js';
import type { UpstreamOptions } from '../upstream/types.js';
import { applyMap, cancelOutcome, checkMap, fetchOutputs, obj, str, transient } from '../upstream/util.js';
import { falFailure, falInput, outputUrls } from './input.js';

/** fal's queue host. */
export const DEFAULT_BASE_URL = 'https://queue.fal.run';

/** The owner/app part of a model id ("fal-ai/bytedance/seedance/v1/pro/image-to-video" → "fal-ai/bytedance"): status, result and cancel live under it. */
export function appOf(model: string): string {
  return model.split('/').filter(Boolean).slice(0, 2).join('/');
}

/**
 * fal's queue API (DECISIONS §16): submit to POST /{model} (with `fal_webhook` when GenGate has a
 * public callback URL), status at GET /{app}/requests/{id}/status, result at GET /{app}/requests/{id},
 * cancel at PUT /{app}/requests/{id}/cancel. fal documents no idempotency key for submit, so a
 * submit is never repeated after it may have been taken. The reference is "{app}|{request id}".
 */
export function createFalBackend(opts: UpstreamOptions): Backend {
  checkMap(opts.map, opts.name);
  const base = opts.baseUrl.replace(/\/+$/, '');
  const origin = new URL(base).origin;
  const auth = { authorization: `Key ${opts.apiKey}` };
  const http = opts.http;
  const model = opts.upstreamModel.replace(/^\/+|\/+$/g, '');

  /** The app path from a status_url of the submit answer, only when it points at our base (credentials never go elsewhere). */
  function appFrom(statusUrl: string | undefined, id: string): string {
    if (statusUrl) {
      try {
        const u = new URL(statusUrl);
        const suffix = `/requests/${id}/status`;
        if (u.origin === origin && u.pathname.endsWith(suffix)) {
          const full = u.pathname.slice(0, -suffix.length);
          const prefix = new URL(base).pathname.replace(/\/+$/, '');
          if (full.startsWith(prefix)) return full.slice(prefix.length).replace(/^\/+/, '');
        }
      } catch {
        // An unreadable status_url: fall back to the documented owner/app rule.
      }
    }
    return appOf(model);
  }

  const parse = (ref: string) => {
    const bar = ref.lastIndexOf('|');
    return { app: ref.slice(0, bar), id: ref.slice(bar + 1) };
  };
  const requestUrl = (ref: string, suffix = '') => {
    const { app, id } = parse(ref);
    return `${base}/${app}/requests/${encodeURIComponent(id)}${suffix}`;
  };

  /** A failure answer as a BackendFailure, or a transient error when it is not one of fal's error shapes. */
  function failureOf(res: JsonResponse, what: string): Error {
    const f = falFailure(res);
    return f ? new BackendFailure(f.kind, f.message) : transient(what, res.status, res.text);
  }

  return {
    name: opts.name,
    idempotentSubmit: false,
    notices: true,

    async submit(job: BackendJob): Promise<string> {
      const query = job.webhookUrl ? `?fal_webhook=${encodeURIComponent(job.webhookUrl)}` : '';
      const res = await http.create('POST', `${base}/${model}${query}`, {
        headers: auth,
        body: opts.asIs ? applyMap({ ...job.input }, opts.map) : falInput(job, opts.map),
      });
      if (res.status < 200 || res.status > 299) {
        const f = falFailure(res);
        throw new BackendFailure(f?.kind ?? 'rejected', f?.message ?? `fal refused the job (HTTP ${res.status})`);
      }
      const data = obj(res.data);
      const id = str(data.request_id);
      // Taken but unreadable: the request may run (and bill), so this is not a NotAccepted.
      if (!id) throw new Error(`fal accepted the request but its answer has no request_id: ${res.text.slice(0, 200)}`);
      return `${appFrom(str(data.status_url), id)}|${id}`;
    },

    async progress(_job, ref): Promise<BackendStatus> {
      const res = await http.json('GET', requestUrl(ref, '/status'), { headers: auth });
      if (res.status === 404) throw new BackendFailure('unavailable', `fal no longer knows request ${parse(ref).id}`);
      if (res.status !== 200 && res.status !== 202) throw transient(`fal status of ${parse(ref).id}`, res.status, res.text);
      const data = obj(res.data);
      switch (data.status) {
        case 'IN_QUEUE':
          return { state: 'queued' };
        case 'IN_PROGRESS':
          return { state: 'running' };
        case 'COMPLETED': {
          const error = str(data.error);
          if (!error) return { state: 'done' };
          const f = falFailure({ ...res, data: { detail: error, error_type: str(data.error_type) ?? 'model_error' } });
          return { state: 'failed', kind: f?.kind ?? 'generation', message: f?.message ?? `fal: ${error}` };
        }
        default:
          throw new Error(`fal status of ${parse(ref).id}: unreadable answer: ${res.text.slice(0, 200)}`);
      }
    },

    async results(job, ref): Promise<BackendOutput> {
      const res = await http.json('GET', requestUrl(ref), { headers: auth });
      if (res.status < 200 || res.status > 299) throw failureOf(res, `fal result of ${parse(ref).id}`);
      if (res.data === undefined) throw new Error(`fal result of ${parse(ref).id}: unreadable answer: ${res.text.slice(0, 200)}`);
      return { files: await fetchOutputs(http, job, outputUrls(res.data), opts.tmpDir, 'fal finished the request without any file') };
    },

    cancel(_job, ref) {
      // 202 CANCELLATION_REQUESTED: a queued request leaves the queue (never billed); a running one is
      // sent the signal, which fal documents as the cancellation of the request. 400 ALREADY_COMPLETED:
      // too late. 404: fal does not know the request (anything else is unclear).
      return cancelOutcome(
        () => http.json('PUT', requestUrl(ref, '/cancel'), { headers: auth }),
        (res) => {
          const status = str(obj(res.data).status);
          if (res.status === 202 || (res.status === 200 && status === 'CANCELLATION_REQUESTED')) return 'cancelled';
          if (res.status === 400 && status === 'ALREADY_COMPLETED') return 'not-cancellable';
          return 'unknown';
        },
      );
    },
  };
}
