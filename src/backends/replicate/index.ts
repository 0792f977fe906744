import { BackendFailure, type Backend, type BackendJob, type BackendOutput, type BackendStatus } from '../types.js';
import type { UpstreamOptions } from '../upstream/types.js';
import { applyMap, cancelOutcome, checkMap, fetchOutputs, obj, str, transient } from '../upstream/util.js';
import { createRefusal, kindOfPredictionError, outputLinks, replicateInput } from './input.js';

/** Replicate's API host. */
export const DEFAULT_BASE_URL = 'https://api.replicate.com';

/**
 * Replicate's own deadline for each prediction (Cancel-After header): matches GenGate's 20-minute
 * task timeout, so a prediction still waiting then is aborted (not billed) and one still running is
 * stopped by Replicate itself even if our cancel call is lost.
 */
const CANCEL_AFTER = '20m';

/** Where a create goes: "owner/name" → the model's predictions; "owner/name:version" or a bare version id → /v1/predictions. */
function createTarget(model: string): { path: string; version?: string } {
  const colon = model.indexOf(':');
  if (colon >= 0) return { path: '/v1/predictions', version: model.slice(colon + 1) };
  if (/^[0-9a-f]{64}$/.test(model)) return { path: '/v1/predictions', version: model };
  const [owner, name] = model.split('/');
  return { path: `/v1/models/${encodeURIComponent(owner ?? '')}/${encodeURIComponent(name ?? '')}/predictions` };
}

/**
 * Replicate predictions (DECISIONS §16): create (with `webhook` and webhook_events_filter
 * ["completed"] when GenGate has a public callback URL), get, cancel. Replicate documents no
 * idempotency key for creating predictions, so a create is never repeated after it may have been taken.
 * URLs are built from the configured base, never from the prediction's `urls`, so the token goes only there.
 */
export function createReplicateBackend(opts: UpstreamOptions): Backend {
  checkMap(opts.map, opts.name);
  const base = opts.baseUrl.replace(/\/+$/, '');
  const auth = { authorization: `Bearer ${opts.apiKey}` };
  const http = opts.http;
  const target = createTarget(opts.upstreamModel);

  async function getPrediction(id: string): Promise<Record<string, unknown>> {
    const res = await http.json('GET', `${base}/v1/predictions/${encodeURIComponent(id)}`, { headers: auth });
    if (res.status === 404) throw new BackendFailure('unavailable', `Replicate no longer knows prediction ${id}`);
    if (res.status < 200 || res.status > 299) throw transient(`Replicate prediction ${id}`, res.status, res.text);
    const data = obj(res.data);
    if (typeof data.status !== 'string') throw new Error(`Replicate prediction ${id}: unreadable answer: ${res.text.slice(0, 200)}`);
    return data;
  }

  return {
    name: opts.name,
    idempotentSubmit: false,
    notices: true,

    async submit(job: BackendJob): Promise<string> {
      const body: Record<string, unknown> = {
        ...(target.version ? { version: target.version } : {}),
        input: opts.asIs ? applyMap({ ...job.input }, opts.map) : replicateInput(job, opts.map),
        ...(job.webhookUrl ? { webhook: job.webhookUrl, webhook_events_filter: ['completed'] } : {}),
      };
      const res = await http.create('POST', `${base}${target.path}`, { headers: { ...auth, 'cancel-after': CANCEL_AFTER }, body });
      if (res.status < 200 || res.status > 299) {
        const r = createRefusal(res);
        throw new BackendFailure(r.kind, r.message);
      }
      const id = str(obj(res.data).id);
      // Created but unreadable: the prediction may run (and bill), so this is not a NotAccepted.
      if (!id) throw new Error(`Replicate created the prediction but its answer has no id: ${res.text.slice(0, 200)}`);
      return id;
    },

    async progress(_job, ref): Promise<BackendStatus> {
      const p = await getPrediction(ref);
      switch (p.status) {
        case 'starting':
          return { state: 'queued' };
        case 'processing':
          return { state: 'running' };
        case 'succeeded':
          return { state: 'done' };
        case 'failed': {
          const error = str(p.error) ?? (p.error ? JSON.stringify(p.error) : 'no reason given');
          return { state: 'failed', kind: kindOfPredictionError(error), message: `Replicate failed the prediction: ${error}` };
        }
        case 'canceled':
          return { state: 'failed', kind: 'unavailable', message: 'the prediction was canceled at Replicate' };
        case 'aborted':
          return { state: 'failed', kind: 'timeout', message: 'Replicate aborted the prediction: its deadline passed before it started' };
        default:
          throw new Error(`Replicate prediction ${ref}: unknown status ${String(p.status)}`);
      }
    },

    async results(job, ref): Promise<BackendOutput> {
      const p = await getPrediction(ref);
      if (p.status !== 'succeeded') throw new Error(`Replicate prediction ${ref} is ${String(p.status)}, not succeeded`);
      if (p.data_removed === true) throw new BackendFailure('generation', 'Replicate removed the prediction’s files before they could be copied');
      return { files: await fetchOutputs(http, job, outputLinks(p.output), opts.tmpDir, 'Replicate finished the prediction without any file') };
    },

    cancel(_job, ref) {
      // The answer is the prediction: "canceled" (or "aborted", stopped before it started) is confirmed;
      // "succeeded" or "failed" means it ended first; still running after the call is not confirmed.
      return cancelOutcome(
        () => http.json('POST', `${base}/v1/predictions/${encodeURIComponent(ref)}/cancel`, { headers: auth }),
        (res) => {
          if (res.status < 200 || res.status > 299) return 'unknown';
          const status = obj(res.data).status;
          if (status === 'canceled' || status === 'aborted') return 'cancelled';
          if (status === 'succeeded' || status === 'failed') return 'not-cancellable';
          return 'unknown';
        },
      );
    },
  };
}
