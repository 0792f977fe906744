import { KIE_SUNO, KIE_SUNO_FIELDS, KIE_SUNO_VERSIONS, boolFrom } from '../catalog/index.js';
import { AppError, Errors, shown } from '../errors.js';
import type { StoredResult, TaskRow, ViewOptions } from './view.js';

/**
 * kie.ai's Suno endpoints (KIE.md §3, DECISIONS §18, decision 0404): the body of
 * `POST /api/v1/generate` turned into the createTask body of an ordinary suno-v6 task, and such a
 * task shown in kie.ai's Suno shapes (record-info and callback). The renames are data
 * (src/catalog/kie-suno.ts); the statuses are the tables below.
 */

/** The task origin of the Suno endpoint (tasks.origin). */
export const SUNO_ORIGIN = 'suno';

const BODY_FIELDS = [...KIE_SUNO_FIELDS, 'callBackUrl'];
const ACCEPTED_MODELS = Object.keys(KIE_SUNO_VERSIONS);

/** The createTask body (under the endpoint's mapped name) of a Suno body; refuses what the endpoint does not take, naming the field as sent. */
export function sunoCreateBody(sent: unknown): Record<string, unknown> {
  if (sent === null || typeof sent !== 'object' || Array.isArray(sent)) {
    throw Errors.invalid(`request body must be a JSON object with ${KIE_SUNO_FIELDS.join(', ')} and callBackUrl (got ${shown(sent)})`);
  }
  const body = sent as Record<string, unknown>;
  for (const field of Object.keys(body)) {
    if (!BODY_FIELDS.includes(field)) {
      throw Errors.invalid(`${field} is not a field of the /api/v1/generate body accepted by GenGate; its fields are ${BODY_FIELDS.join(', ')}`);
    }
  }
  const model = body.model;
  if (model === undefined || model === null || model === '') throw Errors.missingField('model', `one of ${ACCEPTED_MODELS.join(', ')}`);
  if (typeof model !== 'string' || !ACCEPTED_MODELS.includes(model.trim().toUpperCase())) {
    throw Errors.invalid(`model must be one of ${ACCEPTED_MODELS.join(', ')} (got ${shown(model)})`);
  }
  const { callBackUrl, ...input } = body;
  // suno-v6 uses its version only with custom mode (SPEC); kie.ai clients send model in every request,
  // so without custom mode it is checked above and the default version runs (decision 0404).
  if (boolFrom(body.customMode) !== true) delete input.model;
  return { model: KIE_SUNO.name, input, ...(callBackUrl === undefined ? {} : { callBackUrl }) };
}

/** suno-v6 field → the body name a Suno client sends for it, to word refusals in the client's names. */
const SENT_NAME: ReadonlyArray<[string, string]> = Object.entries(KIE_SUNO.input).map(([sent, rule]) => [typeof rule === 'string' ? rule : rule.to, sent]);

/** The same refusal worded for a Suno client: its fields are top-level, under kie.ai's names. */
export function sunoRefusal(e: unknown): unknown {
  if (!(e instanceof AppError)) return e;
  let msg = e.message;
  for (const [field, sent] of SENT_NAME) msg = msg.replace(new RegExp(`\\binput\\.${field}\\b`, 'g'), sent);
  msg = msg.replace(/\binput\./g, '');
  return msg === e.message ? e : new AppError(e.kind, msg, e.data, e.headers);
}

/** kie.ai's Suno `status` of each GenGate state; a failure is worded by its failCode (SUNO_FAILURE). */
export const SUNO_STATUS: Readonly<Record<Exclude<TaskRow['state'], 'fail'>, string>> = {
  waiting: 'PENDING',
  queuing: 'PENDING',
  generating: 'PENDING',
  success: 'SUCCESS',
};

/**
 * kie.ai's Suno failure statuses by GenGate failCode: content and safety refusals (400) are
 * SENSITIVE_WORD_ERROR, a model that refused the parameters (422) or a service that could not take
 * the task (503) CREATE_TASK_FAILED; every other failure (501, 500, 504) GENERATE_AUDIO_FAILED.
 */
export const SUNO_FAILURE: Readonly<Record<number, string>> = {
  400: 'SENSITIVE_WORD_ERROR',
  422: 'CREATE_TASK_FAILED',
  503: 'CREATE_TASK_FAILED',
};
const OTHER_FAILURE = 'GENERATE_AUDIO_FAILED';

/** The kie.ai Suno status of a task. */
export function sunoStatus(row: Pick<TaskRow, 'state' | 'fail_code'>): string {
  if (row.state !== 'fail') return SUNO_STATUS[row.state];
  return SUNO_FAILURE[Number(row.fail_code)] ?? OTHER_FAILURE;
}

/** One track as GenGate knows it: the file, and what the task asked for. */
interface Track {
  id: string;
  url: string;
  prompt: string;
  title: string;
  tags: string;
  modelName: string;
  duration: number | null;
  createTime: number;
}

/** The tracks of a successful task (none otherwise). */
function tracks(row: TaskRow, opts: ViewOptions): Track[] {
  if (row.state !== 'success' || !row.result) return [];
  const result = JSON.parse(row.result) as StoredResult;
  const input = JSON.parse(row.input) as Record<string, unknown>;
  const text = (v: unknown) => (typeof v === 'string' ? v : '');
  return result.files.map((f) => ({
    id: f.id,
    url: opts.fileUrl(f.id, f.name),
    prompt: text(input.prompt),
    title: text(input.title),
    tags: text(input.style),
    modelName: text(input.version),
    // GenGate does not measure the tracks: the length asked for, if one was.
    duration: typeof input.duration === 'number' ? input.duration : null,
    createTime: Number(row.completed_at),
  }));
}

/** `data` of `GET /api/v1/generate/record-info` (kie.ai's Suno shape). GenGate keeps no cover image: imageUrl is null. */
export function sunoView(row: TaskRow, opts: ViewOptions) {
  const failed = row.state === 'fail';
  return {
    taskId: row.id,
    parentMusicId: '',
    param: row.param,
    response: {
      taskId: row.id,
      sunoData: tracks(row, opts).map((t) => ({
        id: t.id,
        audioUrl: t.url,
        sourceAudioUrl: t.url,
        streamAudioUrl: t.url,
        sourceStreamAudioUrl: t.url,
        imageUrl: null,
        sourceImageUrl: null,
        prompt: t.prompt,
        modelName: t.modelName,
        title: t.title,
        tags: t.tags,
        createTime: t.createTime,
        duration: t.duration,
      })),
    },
    status: sunoStatus(row),
    type: 'GENERATE',
    errorCode: failed ? Number(row.fail_code) : null,
    errorMessage: failed ? (row.fail_msg ?? '') : null,
  };
}

/** The callback body of a finished Suno task (kie.ai's "complete" or "error" callback). */
export function sunoCallback(row: TaskRow, opts: ViewOptions) {
  if (row.state !== 'success') {
    const msg = row.fail_msg ?? '';
    return { code: Number(row.fail_code ?? 500), msg, data: { callbackType: 'error', task_id: row.id, data: null, error: msg } };
  }
  const data = tracks(row, opts).map((t) => ({
    id: t.id,
    audio_url: t.url,
    source_audio_url: t.url,
    stream_audio_url: t.url,
    source_stream_audio_url: t.url,
    image_url: null,
    source_image_url: null,
    prompt: t.prompt,
    model_name: t.modelName,
    title: t.title,
    tags: t.tags,
    createTime: t.createTime,
    duration: t.duration,
  }));
  return { code: 200, msg: 'All generated successfully.', data: { callbackType: 'complete', task_id: row.id, data } };
}
