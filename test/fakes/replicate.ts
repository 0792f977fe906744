import { startFake, type Answer, type Call } from './base.js';

/**
 * Replicate's HTTP API as its documentation describes it: `Authorization: Bearer …`; predictions
 * created at POST /v1/models/{owner}/{name}/predictions or POST /v1/predictions {version} (201, status
 * "starting"), read at GET /v1/predictions/{id} (starting → processing → succeeded/failed over polls),
 * cancelled at POST /v1/predictions/{id}/cancel; errors as problem details `{title, detail, status}`.
 * Markers in the prompt: [invalid] (422) [credit] (402) [busy] (429) [down] (503) [policy] [fail-later]
 * (fail after acceptance) [aborted] [removed] [garbage]. With `finishAfterMs` predictions finish on their
 * own clock and the webhook is POSTed with the prediction, as Replicate does.
 */
export interface ReplicateFakeOptions {
  /** Finish every prediction on its own this long after creation (instead of over polls), and send the webhook then. */
  finishAfterMs?: number;
  /** Where webhooks really go (tests map GenGate's PUBLIC_BASE_URL to its loopback address). */
  webhookAddress?: (url: string) => string;
}

export async function startReplicateFake(token: string, output: (model: string, base: string) => unknown, options: ReplicateFakeOptions = {}) {
  const predictions = new Map<string, { view: Record<string, unknown>; polls: number; prompt: string }>();
  const deliveries: { url: string; status: number | string }[] = [];
  /** The terminal state a prediction reaches, by the markers of its prompt. */
  const finish = (p: { view: Record<string, unknown>; prompt: string }, base: string) => {
    if (p.prompt.includes('[policy]'))
      Object.assign(p.view, { status: 'failed', error: 'The input or output was flagged as sensitive. Please try again with different inputs. (E005)' });
    else if (p.prompt.includes('[fail-later]')) Object.assign(p.view, { status: 'failed', error: 'E1001: Model out of memory (OOM killed)' });
    else if (p.prompt.includes('[removed]')) Object.assign(p.view, { status: 'succeeded', output: null, data_removed: true });
    else Object.assign(p.view, { status: 'succeeded', output: output(String(p.view.model), base), metrics: { predict_time: 12.5 } });
  };
  /** Replicate POSTs the prediction to the webhook when it completes (the "completed" event). */
  const sendWebhook = async (p: { view: Record<string, unknown> }, body: { webhook?: string; webhook_events_filter?: string[] }) => {
    if (!body.webhook || (body.webhook_events_filter && !body.webhook_events_filter.includes('completed'))) return;
    const url = options.webhookAddress ? options.webhookAddress(body.webhook) : body.webhook;
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(p.view) }).then(
      (r) => r.status,
      (e: unknown) => String(e),
    );
    deliveries.push({ url: body.webhook, status: res });
  };
  let next = 1;
  const problem = (status: number, title: string, detail: string, extra: Record<string, unknown> = {}, headers?: Record<string, string>): Answer => ({
    status,
    json: { title, detail, status, ...extra },
    headers: { 'content-type': 'application/problem+json', ...headers },
  });

  function handle(call: Call, base: string): Answer {
    if (call.headers.authorization !== `Bearer ${token}`) return problem(401, 'Unauthenticated', 'You did not pass a valid authentication token');
    const created = /^\/v1\/models\/([^/]+)\/([^/]+)\/predictions$/.exec(call.path);
    if (call.method === 'POST' && (created || call.path === '/v1/predictions')) {
      const body = (call.json ?? {}) as { input?: Record<string, unknown>; version?: string };
      const prompt = typeof body.input?.prompt === 'string' ? body.input.prompt : '';
      if (!body.input)
        return problem(422, 'Input validation failed', '- input is required', {
          invalid_fields: [{ type: 'required', field: 'input', description: 'input is required' }],
        });
      if (!created && !body.version) return problem(422, 'Invalid version', 'version is required');
      if (prompt.includes('[invalid]')) {
        return problem(422, 'Input validation failed', '- input.duration: duration must be one of the following: 5, 10', {
          invalid_fields: [{ type: 'enum', field: 'input.duration', description: 'duration must be one of the following: 5, 10' }],
        });
      }
      if (prompt.includes('[credit]')) return problem(402, 'Insufficient credit', 'You have insufficient credit to run this model.');
      if (prompt.includes('[busy]'))
        return problem(429, 'Request was throttled', 'Request was throttled. Your rate limit resets in ~4s.', {}, { 'retry-after': '4' });
      if (prompt.includes('[down]')) return problem(503, 'Service Unavailable', 'Replicate is temporarily unavailable.');
      const id = `rp${String(next++).padStart(6, '0')}xyz`;
      const model = created ? `${created[1]}/${created[2]}` : 'owner/versioned';
      const view: Record<string, unknown> = {
        id,
        model,
        version: body.version ?? 'hidden',
        input: body.input,
        logs: '',
        output: null,
        data_removed: false,
        error: null,
        status: 'starting',
        created_at: '2026-01-01T00:00:00.000Z',
        urls: { get: `${base}/v1/predictions/${id}`, cancel: `${base}/v1/predictions/${id}/cancel`, web: `https://replicate.com/p/${id}` },
      };
      const p = { view, polls: 0, prompt };
      predictions.set(id, p);
      if (options.finishAfterMs !== undefined) {
        setTimeout(() => {
          if (['canceled', 'aborted'].includes(String(p.view.status))) return;
          finish(p, base);
          void sendWebhook(p, body as { webhook?: string; webhook_events_filter?: string[] });
        }, options.finishAfterMs);
      }
      return { status: 201, json: view };
    }
    const m = /^\/v1\/predictions\/([^/]+)(\/cancel)?$/.exec(call.path);
    const p = m ? predictions.get(m[1]!) : undefined;
    if (!m || !p) return problem(404, 'Not found', 'The requested resource could not be found.');
    const terminal = ['succeeded', 'failed', 'canceled', 'aborted'].includes(String(p.view.status));
    if (m[2]) {
      if (call.method !== 'POST') return problem(405, 'Method not allowed', 'Use POST');
      if (!terminal) p.view.status = 'canceled';
      return { status: 200, json: p.view };
    }
    if (p.prompt.includes('[garbage]')) return { status: 200, text: 'upstream connect error or disconnect/reset before headers' };
    if (!terminal && options.finishAfterMs === undefined) {
      p.polls++;
      if (p.prompt.includes('[aborted]')) p.view.status = 'aborted';
      else if (p.polls === 2) Object.assign(p.view, { status: 'processing', logs: 'Generating…' });
      else if (p.polls >= 3) finish(p, base);
    }
    return { status: 200, json: p.view };
  }

  const fake = await startFake(handle);
  return { ...fake, predictions, deliveries };
}
