import type { BackendJob, FailKind } from '../types.js';
import type { JsonResponse } from '../upstream/http.js';
import { applyMap, kindFromText, num, obj, present, someStrings, str } from '../upstream/util.js';

/**
 * Input mapping from GenGate's normalised input to a fal model's input (docs/backends.md "fal").
 * fal hosts many models with their own schemas; the mapping follows the field names most of its
 * image and video endpoints share, and a route's `map` renames, sets or drops fields per model.
 */
export function falInput(job: BackendJob, map: Readonly<Record<string, unknown>> | undefined): Record<string, unknown> {
  const input = job.input;
  const duration = num(input.duration);
  const fields = present({
    prompt: str(input.prompt),
    negative_prompt: str(input.negative_prompt),
    image_url: str(input.first_frame_url),
    end_image_url: str(input.last_frame_url),
    // Photos to edit (image models) are fal's image_urls; reference photos of a video are kept apart.
    image_urls: someStrings(input.image_input),
    reference_image_urls: someStrings(input.image_urls),
    reference_video_urls: someStrings(input.video_urls),
    reference_audio_urls: someStrings(input.audio_urls),
    resolution: str(input.resolution),
    aspect_ratio: str(input.aspect_ratio),
    // fal's video endpoints take the length as a string enum ("5", "10"); automatic length is left to the model.
    duration: duration !== undefined && duration > 0 ? String(duration) : undefined,
    generate_audio: typeof input.generate_audio === 'boolean' ? input.generate_audio : undefined,
    camera_fixed: typeof input.camera_fixed === 'boolean' ? input.camera_fixed : undefined,
    seed: num(input.seed),
    quality: str(input.quality),
    output_format: job.kind === 'image' ? str(input.output_format) : undefined,
    num_images: job.kind === 'image' ? 1 : undefined,
  });
  return applyMap(fields, map);
}

/** Every file link in a fal result: video, image(s), audio(s), in that order (fal's File objects carry `url`). */
export function outputUrls(data: unknown): string[] {
  const d = obj(data);
  const urls: string[] = [];
  const add = (v: unknown) => {
    const url = str(obj(v).url) ?? str(v);
    if (url) urls.push(url);
  };
  for (const key of ['video', 'image', 'audio', 'audio_file']) if (d[key] !== undefined) add(d[key]);
  for (const key of ['videos', 'images', 'audios', 'audio_files']) if (Array.isArray(d[key])) (d[key] as unknown[]).forEach(add);
  return urls;
}

/**
 * fal's failure answers as a FailKind. Model errors are `{ detail: [{ loc, msg, type }] }` (422 for
 * input problems, `content_policy_violation` for moderation); request errors are `{ detail, error_type }`
 * (request_timeout/startup_timeout → timeout, runner_* → unavailable). Null when the answer is not a
 * fal error at all (an HTML proxy page, say): the caller treats that as transient.
 */
export function falFailure(res: JsonResponse): { kind: FailKind; message: string } | null {
  const data = obj(res.data);
  const header = res.headers['x-fal-error-type'];
  const errorType = str(data.error_type) ?? (typeof header === 'string' ? header : undefined);
  if (Array.isArray(data.detail)) {
    const items = data.detail.map(obj);
    const types = items.map((i) => str(i.type) ?? '');
    const text = items.map((i) => `${(Array.isArray(i.loc) ? i.loc.slice(1).join('.') : '') || 'input'}: ${str(i.msg) ?? ''}`).join('; ');
    if (types.some((t) => /content_policy|nsfw|safety/.test(t))) return { kind: 'content', message: `fal refused the content: ${text}` };
    const kind: FailKind = res.status === 422 || res.status === 400 ? 'rejected' : kindFromText(`${types.join(' ')} ${text}`, 'generation');
    return { kind, message: `fal: ${text}` };
  }
  const detail = str(data.detail);
  if (!errorType && detail === undefined) return null;
  const message = `fal: ${detail ?? errorType}${errorType ? ` (${errorType})` : ''}`;
  if (errorType && /timeout/.test(errorType)) return { kind: 'timeout', message };
  if (errorType && /^runner_|scheduling/.test(errorType)) return { kind: 'unavailable', message };
  if (res.status === 400 || res.status === 422) return { kind: kindFromText(detail ?? '', 'rejected'), message };
  if (res.status === 504) return { kind: 'timeout', message };
  return { kind: kindFromText(detail ?? '', 'generation'), message };
}
