import type { ModelDef } from '../types.js';
import { rates } from './define.js';
import { videoModel, type VideoExtra, type VideoSpec } from './video-family.js';

/** The seven aspect ratios of the seedance tables; 1.5-pro has them without `adaptive`. */
const ASPECTS = ['adaptive', '16:9', '9:16', '1:1', '4:3', '3:4', '21:9'] as const;
const FIXED_ASPECTS = ['16:9', '9:16', '1:1', '4:3', '3:4', '21:9'] as const;
/** Fields seedance 2.0 and 2.0-fast share (SPEC table, "Fast" column; DECISIONS §11 for video_mode). */
const FAST_EXTRAS: readonly VideoExtra[] = ['video_mode', 'generate_audio', 'return_last_frame', 'web_search'];

/** SPEC: seedance-2.5 — the full table, automatic length, drafts, 30 references. */
export const seedance25: ModelDef = videoModel({
  id: 'seedance-2.5',
  title: 'Seedance 2.5',
  summary: 'Text, photo, video and audio to video up to 30 s, with automatic length and a 480p draft flow.',
  resolutions: ['480p', '720p', '1080p'],
  defaultResolution: '720p',
  aspects: ASPECTS,
  defaultAspect: 'adaptive',
  duration: { min: 4, max: 30, auto: true, default: 5 },
  lastFrame: true,
  images: { max: 30, linkFormats: ['BMP', 'TIFF', 'GIF', 'HEIC'], assets: true },
  videos: { max: 10, totalSeconds: 30, clipMax: 30 },
  audios: { max: 10, totalSeconds: 30, alone: true },
  extras: [...FAST_EXTRAS, 'output_format', 'watermark', 'draft'],
  price: {
    unit: 'second',
    by: 'resolution',
    rates: rates({ '480p': '0.125', '720p': '0.281', '1080p': '0.501' }),
    withVideo: rates({ '480p': '0.075', '720p': '0.169', '1080p': '0.299' }),
  },
});

/** Seedance 2.0 and 2.0 Fast share every input (SPEC "Fast" column; DECISIONS §11) and differ in resolutions and price. */
function seedance20Family(spec: Pick<VideoSpec, 'id' | 'title' | 'summary' | 'resolutions' | 'price'>): ModelDef {
  return videoModel({
    ...spec,
    defaultResolution: '720p',
    aspects: ASPECTS,
    defaultAspect: '16:9',
    duration: { min: 4, max: 15, default: 5 },
    lastFrame: true,
    images: { max: 9 },
    videos: { max: 3, totalSeconds: 15, clipMax: 15 },
    audios: { max: 3, totalSeconds: 15, alone: false },
    extras: FAST_EXTRAS,
  });
}

/** SPEC: seedance-2.0-fast — the "Fast" column. */
export const seedance20Fast: ModelDef = seedance20Family({
  id: 'seedance-2.0-fast',
  title: 'Seedance 2.0 Fast',
  summary: 'Fast text, photo, video and audio to video up to 15 s at 480p or 720p.',
  resolutions: ['480p', '720p'],
  price: {
    unit: 'second',
    by: 'resolution',
    rates: rates({ '480p': '0.052', '720p': '0.112' }),
    withVideo: rates({ '480p': '0.031', '720p': '0.067' }),
  },
});

/** DECISIONS §4/§11: seedance-2.0 — the fast model's inputs plus 1080p. */
export const seedance20: ModelDef = seedance20Family({
  id: 'seedance-2.0',
  title: 'Seedance 2.0',
  summary: 'Text, photo, video and audio to video up to 15 s, up to 1080p.',
  resolutions: ['480p', '720p', '1080p'],
  price: {
    unit: 'second',
    by: 'resolution',
    rates: rates({ '480p': '0.100', '720p': '0.220', '1080p': '0.400' }),
    withVideo: rates({ '480p': '0.060', '720p': '0.130', '1080p': '0.240' }),
  },
});

/** DECISIONS §4/§11: seedance-2.0-mini — photos only (it has no with-video price), 480p or 720p. */
export const seedance20Mini: ModelDef = videoModel({
  id: 'seedance-2.0-mini',
  title: 'Seedance 2.0 Mini',
  summary: 'Low-cost text and photo to video up to 15 s at 480p or 720p.',
  resolutions: ['480p', '720p'],
  defaultResolution: '720p',
  aspects: ASPECTS,
  defaultAspect: '16:9',
  duration: { min: 4, max: 15, default: 5 },
  lastFrame: true,
  images: { max: 9 },
  extras: ['generate_audio', 'return_last_frame'],
  price: { unit: 'second', by: 'resolution', rates: rates({ '480p': '0.030', '720p': '0.065' }) },
  hints: { video_urls: 'this model takes photos only', audio_urls: 'this model takes photos only' },
});

/** SPEC: seedance-1.5-pro — frames only; a photo is animated through first_frame_url. */
export const seedance15Pro: ModelDef = videoModel({
  id: 'seedance-1.5-pro',
  title: 'Seedance 1.5 Pro',
  summary: 'Text to video, or a photo animated from its first frame (optionally to a last frame), up to 12 s.',
  resolutions: ['480p', '720p', '1080p'],
  defaultResolution: '720p',
  aspects: FIXED_ASPECTS,
  defaultAspect: '16:9',
  duration: { min: 4, max: 12, default: 5 },
  lastFrame: true,
  extras: ['generate_audio', 'camera_fixed'],
  price: { unit: 'second', by: 'resolution', rates: rates({ '480p': '0.027', '720p': '0.058', '1080p': '0.141' }) },
  hints: {
    image_urls: 'to animate a photo with this model put it in input.first_frame_url',
    video_urls: 'this model takes frames only',
    audio_urls: 'this model takes frames only',
  },
});
