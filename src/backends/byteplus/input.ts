import type { BackendJob, FailKind } from '../types.js';
import { applyMap, kindFromText, num, present, str, strings } from '../upstream/util.js';

/**
 * Input mapping from GenGate's normalised input to BytePlus ModelArk (docs/backends.md "BytePlus").
 * Video (Seedance, POST /api/v3/contents/generations/tasks): the prompt and every medium become
 * `content` items with a role; the switches are top-level fields of the task.
 */
export function videoTask(job: BackendJob, model: string, map: Readonly<Record<string, unknown>> | undefined): Record<string, unknown> {
  const input = job.input;
  const content: Record<string, unknown>[] = [];
  const prompt = str(input.prompt);
  if (prompt) content.push({ type: 'text', text: prompt });
  const image = (url: string, role: string) => content.push({ type: 'image_url', image_url: { url }, role });
  const first = str(input.first_frame_url);
  if (first) image(first, 'first_frame');
  const last = str(input.last_frame_url);
  if (last) image(last, 'last_frame');
  for (const url of strings(input.image_urls)) image(url, 'reference_image');
  for (const url of strings(input.video_urls)) content.push({ type: 'video_url', video_url: { url }, role: 'reference_video' });
  for (const url of strings(input.audio_urls)) content.push({ type: 'audio_url', audio_url: { url }, role: 'reference_audio' });
  const duration = input.duration === 'auto' || input.duration === -1 ? -1 : num(input.duration);
  const fields = present({
    resolution: str(input.resolution),
    ratio: str(input.aspect_ratio),
    duration,
    seed: num(input.seed),
    generate_audio: typeof input.generate_audio === 'boolean' ? input.generate_audio : undefined,
    return_last_frame: input.return_last_frame === true ? true : undefined,
    camera_fixed: typeof input.camera_fixed === 'boolean' ? input.camera_fixed : undefined,
    // ModelArk may mark results by default; GenGate marks them only when asked.
    watermark: input.watermark === true,
    draft: input.draft === true ? true : undefined,
    tools: input.web_search === true ? [{ type: 'web_search' }] : undefined,
    callback_url: job.webhookUrl,
  });
  return { model, content, ...applyMap(fields, map) };
}

/** Long side in pixels of each size class; the pixel count of a square of that side is kept for every ratio. */
const SIDE: Record<string, number> = { '1K': 1024, '2K': 2048, '4K': 4096 };

/** "WIDTHxHEIGHT" for a size class and aspect ratio, multiples of 16, about side² pixels (ModelArk's pixel form of `size`). */
export function pixelSize(sizeClass: string, aspect: string): string {
  const side = SIDE[sizeClass] ?? 2048;
  const [w, h] = aspect.split(':').map(Number) as [number, number];
  if (!w || !h) return sizeClass;
  const area = side * side;
  const width = Math.round(Math.sqrt((area * w) / h) / 16) * 16;
  const height = Math.round(area / width / 16) * 16;
  return `${width}x${height}`;
}

/** Image (Seedream, POST /api/v3/images/generations): one image per run, returned as a link. */
export function imageRequest(job: BackendJob, model: string, map: Readonly<Record<string, unknown>> | undefined): Record<string, unknown> {
  const input = job.input;
  const photos = strings(input.image_input);
  const sizeClass = str(input.resolution) ?? '2K';
  const aspect = str(input.aspect_ratio);
  const fields = present({
    prompt: str(input.prompt),
    image: photos.length === 0 ? undefined : photos.length === 1 ? photos[0] : photos,
    size: aspect ? pixelSize(sizeClass, aspect) : sizeClass,
    seed: num(input.seed),
    // Seedream takes png or jpeg here; a model that does not can drop it with the route's map (omit).
    output_format: str(input.output_format),
    sequential_image_generation: 'disabled',
    response_format: 'url',
    watermark: typeof input.watermark === 'boolean' ? input.watermark : false,
  });
  return { model, ...applyMap(fields, map) };
}

/** ModelArk's error object ({code, message}) as a FailKind: moderation codes, parameter codes, timeouts, capacity. */
export function kindOfError(code: string, message: string, otherwise: FailKind): FailKind {
  const text = `${code} ${message}`;
  if (/SensitiveContent|RiskDetection|Copyright|PrivacyInformation/i.test(code)) return 'content';
  if (/^(InvalidParameter|MissingParameter|InvalidArgument|InvalidImage|InvalidVideo|InvalidAudio|UnsupportedModel|InvalidDuration)/i.test(code))
    return 'rejected';
  if (/Timeout|Expired/i.test(code)) return 'timeout';
  if (/ServerOverloaded|ServiceUnavailable|InternalServiceError|RateLimit|Quota/i.test(code)) return 'unavailable';
  return kindFromText(text, otherwise);
}
