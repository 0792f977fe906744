import { randomUUID } from 'node:crypto';
import { startFake, type Answer, type Call } from './base.js';

/**
 * kie.ai as its public documentation describes it (KIE.md §3, §6), for the kie adapter: the jobs
 * API (`createTask`, `recordInfo` with `state` waiting → generating → success/fail and `resultJson`
 * as a JSON string), kie.ai's Suno endpoints (`generate`, `generate/record-info` with PENDING →
 * TEXT_SUCCESS → FIRST_SUCCESS → SUCCESS), `chat/credit`, `common/download-url`, and a separate
 * upload host (`/api/file-stream-upload`). Answers use kie.ai's `{code, msg, data}` envelope, its
 * error codes mostly inside an HTTP 200 as kie.ai does. Markers in the prompt:
 * [invalid] (422) [busy] (HTTP 429) [down] (455 maintenance) [lost] (connection dropped after the
 * create was read: the task IS made) [policy] (fails later, 400 content policy) [fail] (fails
 * later, 501) [sensitive] (Suno SENSITIVE_WORD_ERROR). A Suno `generate` without a `callBackUrl` is
 * refused as kie.ai refuses it (400 "Please enter callBackUrl").
 */
export interface KieFakeOptions {
  /** Finish every task on its own this long after create (instead of over polls) and POST its callBackUrl. */
  finishAfterMs?: number;
  /** Where callbacks really go (tests map GenGate's PUBLIC_BASE_URL to its loopback address). */
  webhookAddress?: (url: string) => string;
  /** Result links refuse a direct download (403): only a link from common/download-url works. */
  refuseDirect?: boolean;
}

interface FakeTask {
  id: string;
  model: string;
  suno: boolean;
  prompt: string;
  polls: number;
  done: boolean;
  callBackUrl?: string;
}

const VIDEO_ID = /seedance|grok|wan|video/;

export async function startKieFake(key: string, options: KieFakeOptions = {}) {
  const tasks = new Map<string, FakeTask>();
  const deliveries: { url: string; status: number | string }[] = [];
  const uploads: { fileName: string; uploadPath: string; bytes: number; url: string }[] = [];
  const state = { credit: 1000 as number };
  const envelope = (code: number, msg: string, data: unknown = null, status = 200): Answer => ({ status, json: { code, msg, data } });
  const authorised = (call: Call) => call.headers.authorization === `Bearer ${key}`;

  /** Where the fake's results live: /media/<name> (served by base.ts), or /protected/<name> when direct downloads are refused. */
  const resultLink = (base: string, name: string) => `${base}/${options.refuseDirect ? 'protected' : 'media'}/${name}`;

  function created(call: Call, suno: boolean): Answer {
    const body = (call.json ?? {}) as Record<string, unknown>;
    const input = (suno ? body : (body.input ?? {})) as Record<string, unknown>;
    const prompt = typeof input.prompt === 'string' ? input.prompt : '';
    if (typeof body.model !== 'string' || !body.model) return envelope(422, 'model is required');
    // kie.ai's Suno API takes no task without a callback address (issue 36).
    if (suno && (typeof body.callBackUrl !== 'string' || !/^https?:\/\/[^/\s]+/.test(body.callBackUrl))) return envelope(400, 'Please enter callBackUrl');
    if (prompt.includes('[invalid]')) return envelope(422, 'Invalid input: duration must be one of 5, 10');
    if (prompt.includes('[busy]')) return envelope(429, 'Rate limit exceeded: 20 requests per 10 seconds', null, 429);
    if (prompt.includes('[down]')) return envelope(455, 'Service unavailable: maintenance in progress');
    if (state.credit <= 0) return envelope(402, 'Credits insufficient');
    const id = `${suno ? 'suno' : 'task'}_${randomUUID().replace(/-/g, '')}`;
    const cb = typeof body.callBackUrl === 'string' && body.callBackUrl ? body.callBackUrl : undefined;
    const task: FakeTask = { id, model: body.model, suno, prompt, polls: 0, done: false, ...(cb ? { callBackUrl: cb } : {}) };
    tasks.set(id, task);
    state.credit -= 1;
    if (options.finishAfterMs !== undefined) {
      setTimeout(() => {
        task.done = true;
        if (task.callBackUrl) void callback(task);
      }, options.finishAfterMs);
    }
    return prompt.includes('[lost]') ? 'drop' : envelope(200, 'success', { taskId: id });
  }

  async function callback(task: FakeTask): Promise<void> {
    const url = options.webhookAddress ? options.webhookAddress(task.callBackUrl!) : task.callBackUrl!;
    try {
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ code: 200, msg: 'done', data: { taskId: task.id } }),
      });
      deliveries.push({ url: task.callBackUrl!, status: res.status });
    } catch (e) {
      deliveries.push({ url: task.callBackUrl!, status: String(e) });
    }
  }

  /** Where a task is: polled tasks go one step per look; self-finishing ones wait for their timer. */
  function phase(task: FakeTask): number {
    task.polls++;
    if (options.finishAfterMs !== undefined) return task.done ? 2 : 0;
    return Math.min(2, task.polls - 1);
  }

  function record(task: FakeTask, base: string): Answer {
    const p = phase(task);
    const common = {
      taskId: task.id,
      model: task.model,
      param: '{}',
      failCode: '',
      failMsg: '',
      costTime: 1000,
      createTime: Date.now(),
      updateTime: Date.now(),
    };
    if (p === 0) return envelope(200, 'success', { ...common, state: 'waiting', resultJson: '' });
    if (p === 1) return envelope(200, 'success', { ...common, state: 'generating', progress: 50, resultJson: '' });
    if (task.prompt.includes('[policy]'))
      return envelope(200, 'success', { ...common, state: 'fail', failCode: '400', failMsg: 'Your content was flagged by our content policy', resultJson: '' });
    if (task.prompt.includes('[fail]'))
      return envelope(200, 'success', { ...common, state: 'fail', failCode: '501', failMsg: 'Generation failed', resultJson: '' });
    const file = VIDEO_ID.test(task.model) ? 'video.mp4' : 'image.jpg';
    return envelope(200, 'success', { ...common, state: 'success', resultJson: JSON.stringify({ resultUrls: [resultLink(base, file)] }) });
  }

  function sunoRecord(task: FakeTask, base: string): Answer {
    const p = options.finishAfterMs !== undefined ? (task.done ? 3 : 0) : Math.min(3, task.polls++);
    const status = task.prompt.includes('[sensitive]') && p === 3 ? 'SENSITIVE_WORD_ERROR' : ['PENDING', 'TEXT_SUCCESS', 'FIRST_SUCCESS', 'SUCCESS'][p]!;
    const sunoData =
      status === 'SUCCESS'
        ? [1, 2].map((n) => ({
            id: `${task.id}-${n}`,
            audioUrl: resultLink(base, `track-${n}.mp3`),
            streamAudioUrl: '',
            imageUrl: '',
            title: 't',
            duration: 1,
          }))
        : [];
    return envelope(200, 'success', {
      taskId: task.id,
      status,
      response: { taskId: task.id, sunoData },
      errorMessage: status === 'SENSITIVE_WORD_ERROR' ? 'The lyrics contain sensitive words' : null,
    });
  }

  async function handle(call: Call, base: string): Promise<Answer> {
    if (call.path.startsWith('/protected/')) return { status: 403, text: 'AccessDenied' };
    if (!authorised(call)) return envelope(401, 'You do not have access permissions', null, 401);
    const taskOf = (id: string | null) => (id ? tasks.get(id) : undefined);
    if (call.method === 'POST' && call.path === '/api/v1/jobs/createTask') return created(call, false);
    if (call.method === 'POST' && call.path === '/api/v1/generate') return created(call, true);
    if (call.method === 'GET' && call.path === '/api/v1/jobs/recordInfo') {
      const task = taskOf(call.query.get('taskId'));
      return task && !task.suno ? record(task, base) : envelope(404, 'recordInfo is null');
    }
    if (call.method === 'GET' && call.path === '/api/v1/generate/record-info') {
      const task = taskOf(call.query.get('taskId'));
      return task?.suno ? sunoRecord(task, base) : envelope(404, 'recordInfo is null');
    }
    if (call.method === 'GET' && call.path === '/api/v1/chat/credit') return envelope(200, 'success', state.credit);
    if (call.method === 'POST' && call.path === '/api/v1/common/download-url') {
      const url = String((call.json as { url?: unknown } | undefined)?.url ?? '');
      if (!url.startsWith(`${base}/protected/`)) return envelope(422, 'The url is not a kie.ai file');
      return envelope(200, 'success', `${base}/media/${url.slice(`${base}/protected/`.length)}`);
    }
    return envelope(404, 'Not Found', null, 404);
  }

  const api = await startFake(handle);
  /** The upload host: a second address, its endpoints at the root. */
  const uploadHost = await startFake((call, base) => {
    if (call.headers.authorization !== `Bearer ${key}`) return { status: 401, json: { success: false, code: 401, msg: 'Unauthorized' } };
    if (call.method !== 'POST' || call.path !== '/api/file-stream-upload') return { status: 404, json: { success: false, code: 404, msg: 'Not Found' } };
    const field = (name: string) => new RegExp(`name="${name}"\\r\\n\\r\\n([^\\r]*)\\r\\n`).exec(call.text)?.[1];
    const fileName = /name="file"; filename="([^"]+)"/.exec(call.text)?.[1];
    const uploadPath = field('uploadPath');
    if (!fileName || !uploadPath) return { status: 200, json: { success: false, code: 400, msg: 'file and uploadPath are required' } };
    const url = `${base}/files/${uploadPath}/${uploads.length + 1}-${fileName}`;
    uploads.push({ fileName, uploadPath, bytes: call.text.length, url });
    return {
      status: 200,
      json: {
        success: true,
        code: 200,
        msg: 'File uploaded successfully',
        data: {
          fileName,
          filePath: `${uploadPath}/${fileName}`,
          downloadUrl: url,
          fileSize: call.text.length,
          mimeType: 'image/png',
          uploadedAt: new Date().toISOString(),
        },
      },
    };
  });

  return {
    url: api.url,
    uploadUrl: uploadHost.url,
    calls: api.calls,
    uploadCalls: uploadHost.calls,
    uploads,
    deliveries,
    tasks,
    /** The credit `chat/credit` answers (each task made costs 1); at 0 or below createTask answers 402. */
    setCredit(n: number) {
      state.credit = n;
    },
    media: api.media,
    /** The createTask / generate calls, oldest first. */
    creates: () => api.calls.filter((c) => c.method === 'POST' && (c.path === '/api/v1/jobs/createTask' || c.path === '/api/v1/generate')),
    close: () => Promise.all([api.close(), uploadHost.close()]).then(() => undefined),
  };
}
