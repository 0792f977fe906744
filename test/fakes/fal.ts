import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { startFake, type Answer, type Call } from './base.js';
import { makeStill } from '../media/helpers.js';

/**
 * fal's queue API as its documentation describes it: `Authorization: Key …`; POST /{model id}
 * (optional ?fal_webhook=) answers request_id with status/response/cancel URLs under /{owner}/{app};
 * status is 202 IN_QUEUE → 202 IN_PROGRESS → 200 COMPLETED over polls; the result is the model's
 * output, or its error (model errors `{detail: [{loc, msg, type}]}`, request errors `{detail, error_type}`).
 * Markers in the prompt: [invalid] (422 at submit) [busy] (429) [down] (503) [policy] [fail-later]
 * [timeout] (fail after acceptance) [garbage] (status is not JSON) [html] (result is a proxy page).
 */
export interface FalFakeOptions {
  /** Complete every request on its own this long after submit (instead of over polls) and POST the webhook. */
  finishAfterMs?: number;
  /** Where webhooks really go (tests map GenGate's PUBLIC_BASE_URL to its loopback address). */
  webhookAddress?: (url: string) => string;
  /** Awaited before a submit is answered (the request is already in `calls`): holds the answer while a test acts. */
  beforeSubmit?: (call: Call) => Promise<void>;
}

export async function startFalFake(key: string, output: (model: string, base: string) => unknown, options: FalFakeOptions = {}) {
  const requests = new Map<string, { model: string; app: string; polls: number; prompt: string; cancelled: boolean; done: boolean }>();
  const deliveries: { url: string; status: number | string }[] = [];
  const appOf = (model: string) => model.split('/').slice(0, 2).join('/');

  async function handle(call: Call, base: string): Promise<Answer> {
    if (call.headers.authorization !== `Key ${key}`) return { status: 401, json: { detail: 'Invalid API key' } };
    const m = /^\/(.+)\/requests\/([^/]+)(\/status|\/cancel)?$/.exec(call.path);
    if (!m) {
      if (call.method !== 'POST') return { status: 405, json: { detail: 'Method Not Allowed' } };
      const model = call.path.slice(1);
      const body = (call.json ?? {}) as Record<string, unknown>;
      const prompt = typeof body.prompt === 'string' ? body.prompt : '';
      if (prompt.includes('[invalid]')) {
        return {
          status: 422,
          json: { detail: [{ loc: ['body', 'duration'], msg: "Input should be '5' or '10'", type: 'literal_error', input: body.duration }] },
        };
      }
      if (prompt.includes('[busy]')) return { status: 429, json: { detail: 'Too many concurrent requests' }, headers: { 'retry-after': '2' } };
      if (prompt.includes('[down]'))
        return {
          status: 503,
          json: { detail: 'No runner could be allocated', error_type: 'runner_scheduling_failure' },
          headers: { 'x-fal-error-type': 'runner_scheduling_failure' },
        };
      await options.beforeSubmit?.(call);
      const id = randomUUID();
      const app = appOf(model);
      const r = { model, app, polls: 0, prompt, cancelled: false, done: false };
      requests.set(id, r);
      const hook = call.query.get('fal_webhook');
      if (options.finishAfterMs !== undefined) {
        setTimeout(() => {
          if (r.cancelled) return;
          r.done = true;
          if (hook) void webhook(hook, id, r, base);
        }, options.finishAfterMs);
      }
      const urls = `${base}/${app}/requests/${id}`;
      return {
        status: 200,
        json: {
          status: 'IN_QUEUE',
          request_id: id,
          gateway_request_id: id,
          response_url: urls,
          status_url: `${urls}/status`,
          cancel_url: `${urls}/cancel`,
          queue_position: 0,
        },
      };
    }
    const [, app, id, action] = m;
    const r = requests.get(id!);
    if (!r || r.app !== app) return { status: 404, json: { detail: 'Request not found' } };
    if (action === '/cancel') {
      if (call.method !== 'PUT') return { status: 405, json: { detail: 'Method Not Allowed' } };
      if (r.done) return { status: 400, json: { status: 'ALREADY_COMPLETED' } };
      r.cancelled = true;
      return { status: 202, json: { status: 'CANCELLATION_REQUESTED' } };
    }
    if (action === '/status') {
      if (r.prompt.includes('[garbage]')) return { status: 200, text: '<html>bad gateway' };
      if (options.finishAfterMs !== undefined && !r.done)
        return { status: 202, json: { status: 'IN_QUEUE', queue_position: 0, response_url: `${base}/${app}/requests/${id}` } };
      if (options.finishAfterMs !== undefined)
        return { status: 200, json: { status: 'COMPLETED', logs: [], metrics: {}, response_url: `${base}/${app}/requests/${id}` } };
      r.polls++;
      if (r.polls === 1) return { status: 202, json: { status: 'IN_QUEUE', queue_position: 1, response_url: `${base}/${app}/requests/${id}` } };
      if (r.polls === 2)
        return {
          status: 202,
          json: { status: 'IN_PROGRESS', logs: [{ message: 'step 1', timestamp: '2026-01-01T00:00:00Z' }], response_url: `${base}/${app}/requests/${id}` },
        };
      r.done = true;
      return { status: 200, json: { status: 'COMPLETED', logs: [], metrics: { inference_time: 3.2 }, response_url: `${base}/${app}/requests/${id}` } };
    }
    if (!r.done) return { status: 400, json: { detail: 'Request is still in progress' } };
    if (r.prompt.includes('[policy]')) {
      return {
        status: 422,
        json: {
          detail: [
            {
              loc: ['body', 'prompt'],
              msg: 'The content could not be processed because it contained material flagged by a content checker.',
              type: 'content_policy_violation',
              url: 'https://docs.fal.ai/errors#content_policy_violation',
            },
          ],
        },
        headers: { 'x-fal-retryable': 'false' },
      };
    }
    if (r.prompt.includes('[timeout]'))
      return { status: 504, json: { detail: 'Request timed out', error_type: 'request_timeout' }, headers: { 'x-fal-error-type': 'request_timeout' } };
    if (r.prompt.includes('[fail-later]')) return { status: 500, json: { detail: [{ loc: ['body'], msg: 'Generation failed', type: 'generation_failed' }] } };
    if (r.prompt.includes('[html]')) return { status: 502, text: '<html><body>502 Bad Gateway</body></html>', headers: { 'content-type': 'text/html' } };
    return { status: 200, json: output(r.model, base) };
  }

  /** fal POSTs `{request_id, gateway_request_id, status: "OK" | "ERROR", payload}` to the webhook when the request completes. */
  async function webhook(hook: string, id: string, r: { model: string; prompt: string }, base: string): Promise<void> {
    const failed = ['[policy]', '[timeout]', '[fail-later]'].some((m) => r.prompt.includes(m));
    const body = failed
      ? {
          request_id: id,
          gateway_request_id: id,
          status: 'ERROR',
          error: 'Invalid status code: 422',
          payload: { detail: [{ loc: ['body'], msg: 'failed', type: 'generation_failed' }] },
        }
      : { request_id: id, gateway_request_id: id, status: 'OK', payload: output(r.model, base) };
    const url = options.webhookAddress ? options.webhookAddress(hook) : hook;
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }).then(
      (x) => x.status,
      (e: unknown) => String(e),
    );
    deliveries.push({ url: hook, status: res });
  }

  const fake = await startFake(handle);
  return { ...fake, requests, deliveries };
}

/**
 * A fake fal route for one model whose submit answers wait while `hold()` gives a promise: the
 * fake, an image it serves, and a catalog file in `scratch` routing `model` to it (key from `keyEnv`).
 */
export async function startHeldFalRoute(scratch: string, key: string, keyEnv: string, model: string, hold: () => Promise<void> | null) {
  const fal = await startFalFake(key, (_model, base) => ({ images: [{ url: `${base}/media/image.jpg`, content_type: 'image/jpeg' }] }), {
    beforeSubmit: async () => hold() ?? undefined,
  });
  fal.media('image.jpg', await makeStill(path.join(scratch, 'image.jpg')), 'image/jpeg');
  const catalog = path.join(scratch, 'catalog.json');
  writeFileSync(
    catalog,
    JSON.stringify({ models: { [model]: { routes: [{ backend: 'fal', model: 'fal-ai/nano-banana', base_url: fal.url, key_env: keyEnv }] } } }),
  );
  return { fal, catalog };
}
