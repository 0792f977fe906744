import { startFake, type Answer, type Call } from './base.js';

/**
 * BytePlus ModelArk as its public API documentation describes it: Bearer key; Seedance video tasks
 * (POST/GET/DELETE /api/v3/contents/generations/tasks) that go queued → running → succeeded over
 * polls; Seedream images answered synchronously; errors as `{ error: { code, message, type } }`.
 * Markers in the prompt pick a failure: [policy] [invalid] [busy] [down] [fail-later] [broken]
 * [expire] [garbage] [noid] [frame-gone] (the last frame's link answers 404).
 */
export interface BytePlusFakeOptions {
  /** Finish every task on its own this long after creation (instead of over polls) and POST it to its callback_url. */
  finishAfterMs?: number;
  /** Where callbacks really go (tests map GenGate's PUBLIC_BASE_URL to its loopback address). */
  callbackAddress?: (url: string) => string;
}

type Task = { body: Record<string, unknown>; polls: number; status: string; prompt: string };

export async function startBytePlusFake(key: string, files: { video: string; frame: string; image: string }, options: BytePlusFakeOptions = {}) {
  const tasks = new Map<string, Task>();
  const deliveries: { url: string; status: number | string }[] = [];
  const finalStatus = (task: Task) =>
    task.prompt.includes('[fail-later]') || task.prompt.includes('[broken]') ? 'failed' : task.prompt.includes('[expire]') ? 'expired' : 'succeeded';
  let next = 1;
  const error = (status: number, code: string, message: string, type: string, headers?: Record<string, string>): Answer => ({
    status,
    json: { error: { code, message: `${message} Request id: 0217${next}`, param: '', type } },
    ...(headers ? { headers } : {}),
  });
  const promptOf = (body: Record<string, unknown>): string => {
    if (typeof body.prompt === 'string') return body.prompt;
    const text = (body.content as { type: string; text?: string }[] | undefined)?.find((c) => c.type === 'text');
    return text?.text ?? '';
  };
  /** Refusals the create calls share. */
  const refuse = (prompt: string, output: string): Answer | null => {
    if (prompt.includes('[policy]'))
      return error(400, `${output}SensitiveContentDetected`, 'The request failed because the input text may contain sensitive information.', 'BadRequest');
    if (prompt.includes('[invalid]'))
      return error(400, 'InvalidParameter', 'One or more parameters specified in the request are not valid: ratio.', 'BadRequest');
    if (prompt.includes('[busy]'))
      return error(429, 'RateLimitExceeded.EndpointRPMExceeded', 'The request has exceeded the rate limit.', 'TooManyRequests', { 'retry-after': '3' });
    if (prompt.includes('[down]')) return error(500, 'InternalServiceError', 'The service encountered an unexpected internal error.', 'InternalServerError');
    return null;
  };

  function handle(call: Call, base: string): Answer {
    if (call.headers.authorization !== `Bearer ${key}`)
      return error(401, 'AuthenticationError', 'The API key in the request is missing or invalid.', 'Unauthorized');
    const body = (call.json ?? {}) as Record<string, unknown>;
    if (call.method === 'POST' && call.path === '/api/v3/images/generations') {
      const prompt = promptOf(body);
      const refused = refuse(prompt, 'InputText');
      if (refused) return refused;
      if (prompt.includes('[broken]'))
        return {
          status: 200,
          json: {
            model: body.model,
            created: 1,
            data: [{ error: { code: 'OutputImageSensitiveContentDetected', message: 'The generated image may contain sensitive information.' } }],
          },
        };
      return {
        status: 200,
        json: {
          model: body.model,
          created: 1757469561,
          data: [{ url: `${base}/media/${files.image}?X-Tos-Expires=86400`, size: String(body.size) }],
          usage: { generated_images: 1, output_tokens: 16384, total_tokens: 16384 },
        },
      };
    }
    if (call.method === 'POST' && call.path === '/api/v3/contents/generations/tasks') {
      const prompt = promptOf(body);
      const refused = refuse(prompt, 'InputText');
      if (refused) return refused;
      const id = `cgt-2026${String(next++).padStart(4, '0')}`;
      const task: Task = { body, polls: 0, status: 'queued', prompt };
      tasks.set(id, task);
      if (options.finishAfterMs !== undefined) {
        setTimeout(() => {
          if (task.status !== 'queued' && task.status !== 'running') return;
          task.status = finalStatus(task);
          void callback(id, task, base);
        }, options.finishAfterMs);
      }
      if (prompt.includes('[noid]')) return { status: 200, json: {} };
      return { status: 200, json: { id } };
    }
    const m = /^\/api\/v3\/contents\/generations\/tasks\/([^/]+)$/.exec(call.path);
    const task = m ? tasks.get(decodeURIComponent(m[1]!)) : undefined;
    if (!m || !task) return error(404, 'ResourceNotFound', 'The specified task does not exist.', 'NotFound');
    const id = decodeURIComponent(m[1]!);
    if (call.method === 'DELETE') {
      if (task.status !== 'queued')
        return error(400, 'InvalidAction.TaskNotCancellable', `Task ${id} in status ${task.status} cannot be cancelled.`, 'BadRequest');
      task.status = 'cancelled';
      return { status: 200, json: {} };
    }
    if (call.method !== 'GET') return error(405, 'MethodNotAllowed', 'Method not allowed.', 'BadRequest');
    if (task.prompt.includes('[garbage]')) return { status: 200, text: '{"id": "cgt-' };
    if ((task.status === 'queued' || task.status === 'running') && options.finishAfterMs === undefined) {
      task.polls++;
      if (task.polls >= 2) task.status = 'running';
      if (task.polls >= 3) task.status = finalStatus(task);
    }
    return { status: 200, json: viewOf(id, task, base) };
  }

  /** ModelArk POSTs the task, as GET shows it, to the callback_url when its status changes. */
  async function callback(id: string, task: Task, base: string): Promise<void> {
    const given = task.body.callback_url;
    if (typeof given !== 'string') return;
    const url = options.callbackAddress ? options.callbackAddress(given) : given;
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(viewOf(id, task, base)) }).then(
      (r) => r.status,
      (e: unknown) => String(e),
    );
    deliveries.push({ url: given, status: res });
  }

  function viewOf(id: string, task: Task, base: string): Record<string, unknown> {
    const view: Record<string, unknown> = {
      id,
      model: task.body.model,
      status: task.status,
      error: null,
      created_at: 1779348818,
      updated_at: 1779348874,
      resolution: task.body.resolution ?? '720p',
      ratio: task.body.ratio ?? '16:9',
      duration: task.body.duration ?? 5,
      framespersecond: 24,
    };
    if (task.status === 'failed') {
      view.error = task.prompt.includes('[broken]')
        ? { code: 'InternalServiceError', message: 'The service encountered an unexpected internal error.' }
        : { code: 'OutputVideoSensitiveContentDetected', message: 'The generated video may contain sensitive information.' };
    }
    if (task.status === 'succeeded') {
      const frame = task.prompt.includes('[frame-gone]') ? 'expired-frame.png' : files.frame;
      view.content = { video_url: `${base}/media/${files.video}`, ...(task.body.return_last_frame ? { last_frame_url: `${base}/media/${frame}` } : {}) };
      view.usage = { completion_tokens: 108900, total_tokens: 108900 };
      view.duration = 2;
    }
    return view;
  }

  const fake = await startFake(handle);
  return { ...fake, tasks, deliveries };
}
