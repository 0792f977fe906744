import type { BackendJob, FailKind } from '../types.js';
import type { JsonResponse } from '../upstream/http.js';
import { applyMap, kindFromText, num, obj, present, someStrings, str } from '../upstream/util.js';

/**
 * Input mapping from GenGate's normalised input to a Replicate model's input (docs/backends.md
 * "Replicate"). Each Replicate model has its own schema; the defaults follow the names the hosted
 * Seedance, Wan and Nano Banana models use, and a route's `map` renames, sets or drops fields.
 */
export function replicateInput(job: BackendJob, map: Readonly<Record<string, unknown>> | undefined): Record<string, unknown> {
  const input = job.input;
  const duration = num(input.duration);
  const fields = present({
    prompt: str(input.prompt),
    negative_prompt: str(input.negative_prompt),
    image: str(input.first_frame_url),
    last_frame_image: str(input.last_frame_url),
    image_input: someStrings(input.image_input),
    reference_images: someStrings(input.image_urls),
    reference_videos: someStrings(input.video_urls),
    reference_audios: someStrings(input.audio_urls),
    resolution: str(input.resolution),
    aspect_ratio: str(input.aspect_ratio),
    // Replicate's video models take whole seconds; automatic length is left to the model's default.
    duration: duration !== undefined && duration > 0 ? duration : undefined,
    generate_audio: typeof input.generate_audio === 'boolean' ? input.generate_audio : undefined,
    camera_fixed: typeof input.camera_fixed === 'boolean' ? input.camera_fixed : undefined,
    seed: num(input.seed),
    quality: str(input.quality),
    output_format: job.kind === 'image' ? str(input.output_format) : undefined,
  });
  return applyMap(fields, map);
}

/** Every http(s) link in a prediction's output: a string, a list of strings, or objects holding them. */
export function outputLinks(output: unknown): string[] {
  if (typeof output === 'string') return /^https?:\/\//.test(output) ? [output] : [];
  if (Array.isArray(output)) return output.flatMap(outputLinks);
  if (output && typeof output === 'object') return Object.values(output).flatMap(outputLinks);
  return [];
}

/** A failed prediction's `error` text as a FailKind (Replicate reports failures as text, sometimes with an E#### code). */
export function kindOfPredictionError(error: string): FailKind {
  if (/E1001|out of memory/i.test(error)) return 'generation';
  return kindFromText(error, 'generation');
}

/**
 * A refused create call (problem details: `{ title, detail, status, invalid_fields? }`) as a
 * FailKind and message: 422 input validation → rejected, naming the fields.
 */
export function createRefusal(res: JsonResponse): { kind: FailKind; message: string } {
  const data = obj(res.data);
  const fields = Array.isArray(data.invalid_fields)
    ? data.invalid_fields
        .map(obj)
        .map((f) => `${str(f.field) ?? 'input'}: ${str(f.description) ?? str(f.type) ?? ''}`)
        .join('; ')
    : '';
  const text = fields || str(data.detail) || str(data.title) || res.text.slice(0, 300);
  return { kind: kindFromText(text, 'rejected'), message: `Replicate refused the prediction (HTTP ${res.status}): ${text}` };
}
