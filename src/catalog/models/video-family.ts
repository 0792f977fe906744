import { choice, flag, link, links, seed, taskId, text, whole } from '../fields.js';
import type { LinkRules } from '../links.js';
import { audioNeedsPicture, draftForcesResolution, lastFrameNeedsFirst, promptOrFirstFrame, videoModeNeeds } from '../rules.js';
import type { FieldDef, MediaLimits, ModelDef, PriceRule, Rule } from '../types.js';
import { AUDIO_FORMATS, CLIP_UPLOAD_MB, PHOTO_FORMATS, PHOTO_UPLOAD_MB, VIDEO_FORMATS, VIDEO_PROMPT_MAX, defineModel } from './define.js';

/** Optional switches of a video model, named after the input field each adds. */
export type VideoExtra =
  'video_mode' | 'return_last_frame' | 'output_format' | 'watermark' | 'draft' | 'web_search' | 'camera_fixed' | 'negative_prompt' | 'generate_audio';

/** What differs between video models; the builder lays out the fields in the spec's table order. */
export interface VideoSpec {
  id: string;
  title: string;
  summary: string;
  resolutions: readonly [string, ...string[]];
  defaultResolution: string;
  aspects: readonly [string, ...string[]];
  defaultAspect: string;
  duration: { min: number; max: number; only?: readonly number[]; auto?: boolean; default: number };
  lastFrame: boolean;
  images?: { max: number; linkFormats?: readonly string[]; assets?: boolean };
  videos?: { max: number; totalSeconds: number; clipMax: number };
  audios?: { max: number; totalSeconds: number; alone: boolean };
  extras: readonly VideoExtra[];
  price: PriceRule;
  hints?: Record<string, string>;
}

const MODES = ['auto', 'reference', 'edit', 'extend'] as const;
const CLIP_MIN_SECONDS = 2;

/** Builds a video model from its spec: fields, media limits and rules. */
export function videoModel(spec: VideoSpec): ModelDef {
  const has = (extra: VideoExtra) => spec.extras.includes(extra);
  const photo: LinkRules = {
    kind: 'image',
    formats: PHOTO_FORMATS,
    linkFormats: spec.images?.linkFormats ?? [],
    assets: spec.images?.assets ?? false,
  };
  const videoLinks: LinkRules = { kind: 'video', formats: VIDEO_FORMATS };
  const audioLinks: LinkRules = { kind: 'audio', formats: AUDIO_FORMATS };
  const clips = spec.videos ?? spec.audios;
  const clipMax = spec.videos?.clipMax ?? spec.audios?.totalSeconds ?? 0;

  const fields: Record<string, FieldDef> = {};
  fields.prompt = text({ max: VIDEO_PROMPT_MAX, description: 'What the video shows.' });
  if (has('negative_prompt')) fields.negative_prompt = text({ max: 500, description: 'What to avoid.' });
  fields.first_frame_url = link(photo, 'Photo the video starts from (animates the photo).');
  if (spec.lastFrame) fields.last_frame_url = link(photo, 'Photo the video ends on; only together with first_frame_url.');
  if (spec.images) {
    fields.image_urls = links(photo, { max: spec.images.max, description: 'Reference photos (character, place, style).' });
  }
  if (spec.videos) {
    fields.video_urls = links(videoLinks, { max: spec.videos.max, description: 'Uploaded reference or source videos; their seconds are billed.' });
  }
  if (spec.audios) {
    fields.audio_urls = links(audioLinks, { max: spec.audios.max, description: 'Uploaded reference audio.' });
  }
  if (has('video_mode')) {
    fields.video_mode = choice(MODES, {
      default: 'auto',
      description: 'Task type: auto (the model picks), reference, edit (needs video_urls), extend (needs video_urls). Alias: omni_reference_task_type.',
    });
  }
  fields.resolution = choice(spec.resolutions, { default: spec.defaultResolution, description: 'Output resolution; sets the per-second rate.' });
  fields.aspect_ratio = choice(spec.aspects, { default: spec.defaultAspect, description: 'Output aspect ratio. Alias: size.' });
  const d = spec.duration;
  fields.duration = whole({
    min: d.min,
    max: d.max,
    ...(d.only ? { only: d.only } : {}),
    ...(d.auto ? { auto: true } : {}),
    default: d.default,
    description: `Length of the result in seconds, as a number or text${d.auto ? '; "auto" or -1 lets the model pick (charged as the maximum, the difference refunded)' : ''}.`,
  });
  if (has('generate_audio')) fields.generate_audio = flag({ default: true, description: 'Generate a sound track.' });
  if (has('return_last_frame')) fields.return_last_frame = flag({ default: false, description: 'Also return the last frame as an image (lastFrameUrl).' });
  if (has('output_format')) fields.output_format = choice(['mp4', 'mov'], { default: 'mp4', description: 'Container of the result.' });
  if (has('watermark')) fields.watermark = flag({ default: false, description: 'Add an AI-generated mark.' });
  if (has('draft')) {
    fields.draft = flag({ default: false, description: 'Render a cheap 480p draft first.' });
    fields.draft_task_id = taskId('Task id of a finished draft: renders its final at 1080p.');
  }
  if (has('web_search'))
    fields.web_search = flag({ default: false, description: 'Let the model search the web. tools:[{"type":"web_search"}] does the same.' });
  if (has('camera_fixed')) fields.camera_fixed = flag({ default: false, description: 'Keep the camera still.' });
  fields.nsfw_check = flag({ default: false, description: 'Check the prompt and photos before charging; a rejection costs nothing.' });
  fields.seed = seed();
  if (clips) {
    fields.trim_video_to = whole({ min: CLIP_MIN_SECONDS, max: clipMax, description: 'Keep the first N seconds of each supplied clip.' });
    fields.trim_to_duration = flag({
      default: false,
      description: 'Trim each clip to the chosen duration (to the model limit with duration auto or video_mode edit).',
    });
    fields.auto_trim = flag({ default: false, description: 'If the clips together exceed the total limit, trim the longest ones instead of failing.' });
  }

  const media: MediaLimits = {
    frames: true,
    ...(spec.images
      ? {
          images: {
            field: 'image_urls',
            min: 0,
            max: spec.images.max,
            formats: PHOTO_FORMATS,
            linkFormats: photo.linkFormats ?? [],
            assets: photo.assets ?? false,
            uploadMb: PHOTO_UPLOAD_MB,
          },
        }
      : {}),
    ...(spec.videos
      ? {
          videos: {
            max: spec.videos.max,
            totalSeconds: spec.videos.totalSeconds,
            clipSeconds: { min: CLIP_MIN_SECONDS, max: spec.videos.clipMax },
            formats: VIDEO_FORMATS,
            uploadMb: CLIP_UPLOAD_MB,
          },
        }
      : {}),
    ...(spec.audios
      ? { audios: { max: spec.audios.max, totalSeconds: spec.audios.totalSeconds, formats: AUDIO_FORMATS, uploadMb: CLIP_UPLOAD_MB, alone: spec.audios.alone } }
      : {}),
  };
  const rules: Rule[] = [promptOrFirstFrame];
  if (spec.lastFrame) rules.push(lastFrameNeedsFirst);
  if (has('video_mode')) rules.push(videoModeNeeds);
  if (spec.audios && !spec.audios.alone) rules.push(audioNeedsPicture);
  if (has('draft')) rules.push(draftForcesResolution);

  return defineModel({
    id: spec.id,
    kind: 'video',
    title: spec.title,
    summary: spec.summary,
    fields,
    rules,
    media,
    price: spec.price,
    ...(d.auto ? { autoLengthSeconds: d.max } : {}),
    ...(has('draft')
      ? { draft: { resolution: '480p', finalResolution: '1080p', keepDays: 7, finalMayChange: ['output_format', 'watermark', 'return_last_frame'] } }
      : {}),
    hints: {
      ...(spec.images ? {} : { image_urls: `to start from a photo use input.first_frame_url` }),
      ...spec.hints,
    },
  });
}
