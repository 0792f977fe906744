import { createHash } from 'node:crypto';
import { imageSize, videoSize } from '../local/dimensions.js';
import { BackendFailure, type BackendJob } from '../types.js';
import { num, str, strings } from '../upstream/util.js';
import { MAX_IMAGES, PHOTO_LISTS, type Workflow } from './workflow.js';

/** Frames per second when the route sets none. */
export const DEFAULT_FPS = 24;
/** Seconds a video is made for when the client asked for an automatic length. */
export const AUTO_SECONDS = 5;

/** The photo each image placeholder of the workflow needs, by placeholder name (`first_frame` → its link). */
export function photosWanted(workflow: Workflow, job: BackendJob): Map<string, string> {
  const list = PHOTO_LISTS.flatMap((f) => strings(job.input[f]));
  const out = new Map<string, string>();
  for (const name of workflow.placeholders) {
    let link: string | undefined;
    let from: string;
    if (name === 'first_frame' || name === 'last_frame') {
      from = `${name}_url`;
      link = str(job.input[from]);
    } else if (/^image_\d$/.test(name)) {
      const i = Number(name.slice('image_'.length));
      if (i > MAX_IMAGES) continue;
      from = `${PHOTO_LISTS.find((f) => job.input[f] !== undefined) ?? 'image_input'}[${i - 1}]`;
      link = list[i - 1];
    } else continue;
    if (!link) throw new BackendFailure('rejected', `this model's workflow needs a photo in input.${from} (it uses {{${name}}}); send one there`);
    out.set(name, link);
  }
  return out;
}

/**
 * The values of the workflow's text and number placeholders for a job (photos are added by the
 * backend after uploading them): the sizes follow the local backend's table, a random seed (-1 or
 * none) is drawn from the task id so a repeated submit sends the same graph, and `frames` is
 * duration × fps + 1 (a clip that starts and ends on a frame).
 */
export function placeholderValues(job: BackendJob, fps: number): Record<string, string | number> {
  const input = job.input;
  const seedGiven = num(input.seed);
  const seed = seedGiven !== undefined && seedGiven >= 0 ? seedGiven : createHash('sha256').update(job.taskId).digest().readUInt32BE(0);
  let size: { width: number; height: number };
  try {
    size =
      job.kind === 'video'
        ? videoSize(str(input.resolution) ?? '720p', str(input.aspect_ratio))
        : imageSize(str(input.resolution) ?? '1K', str(input.aspect_ratio));
  } catch (e) {
    throw new BackendFailure('rejected', `this ComfyUI route cannot size the output: ${(e as Error).message}`);
  }
  const given = num(input.duration);
  const duration = given !== undefined && given > 0 ? given : AUTO_SECONDS;
  return {
    prompt: str(input.prompt) ?? '',
    negative_prompt: str(input.negative_prompt) ?? '',
    seed,
    width: size.width,
    height: size.height,
    duration,
    fps,
    frames: Math.round(duration * fps) + 1,
    task_id: job.taskId,
  };
}

/** The ComfyUI prompt id of a task: a UUID made from the task id, so a repeated submit can find the job it queued. */
export function promptIdOf(taskId: string): string {
  const h = createHash('sha256').update(`gengate:${taskId}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}
