import type { ModelDef } from '../types.js';
import { rates } from './define.js';
import { videoModel, type VideoSpec } from './video-family.js';

/**
 * Video models whose inputs SPEC.md does not show (DECISIONS §11): schemas follow their public
 * model families — prompt, first (and last) frame, resolution, aspect ratio, duration, audio, seed.
 */

const COMMON_ASPECTS = ['16:9', '9:16', '1:1'] as const;

/** Wan 3.0 and 2.7: the same inputs; durations, aspect ratios and prices differ. */
const wan = (spec: Pick<VideoSpec, 'id' | 'title' | 'summary' | 'aspects' | 'duration' | 'price'>) =>
  videoModel({
    ...spec,
    resolutions: ['480p', '720p', '1080p'],
    defaultResolution: '720p',
    defaultAspect: '16:9',
    lastFrame: true,
    extras: ['negative_prompt', 'generate_audio'],
  });

export const wan30: ModelDef = wan({
  id: 'wan-3.0',
  title: 'Wan 3.0',
  summary: 'Text or photo to video of 5, 10 or 15 s with sound, up to 1080p.',
  aspects: ['16:9', '9:16', '1:1', '4:3', '3:4'],
  duration: { min: 5, max: 15, only: [5, 10, 15], default: 5 },
  price: { unit: 'second', by: 'resolution', rates: rates({ '480p': '0.050', '720p': '0.100', '1080p': '0.150' }) },
});

export const wan27: ModelDef = wan({
  id: 'wan-2.7',
  title: 'Wan 2.7',
  summary: 'Text or photo to video of 5 or 10 s with sound, up to 1080p.',
  aspects: COMMON_ASPECTS,
  duration: { min: 5, max: 10, only: [5, 10], default: 5 },
  price: { unit: 'second', by: 'resolution', rates: rates({ '480p': '0.040', '720p': '0.080', '1080p': '0.120' }) },
});

export const higgsfieldGenjutsu: ModelDef = videoModel({
  id: 'higgsfield-genjutsu',
  title: 'Higgsfield Genjutsu',
  summary: 'Cinematic text or photo to video of 5 or 10 s at 720p or 1080p.',
  resolutions: ['720p', '1080p'],
  defaultResolution: '720p',
  aspects: COMMON_ASPECTS,
  defaultAspect: '16:9',
  duration: { min: 5, max: 10, only: [5, 10], default: 5 },
  lastFrame: false,
  extras: [],
  price: { unit: 'second', by: 'resolution', rates: rates({ '720p': '0.100', '1080p': '0.180' }) },
});

/** Grok Imagine 1.5 and Grok Imagine differ in durations and price. */
const grok = (spec: Pick<VideoSpec, 'id' | 'title' | 'summary' | 'duration' | 'price'>) =>
  videoModel({
    ...spec,
    resolutions: ['480p', '720p'],
    defaultResolution: '720p',
    aspects: ['16:9', '9:16', '1:1', '2:3', '3:2'],
    defaultAspect: '16:9',
    lastFrame: false,
    extras: ['generate_audio'],
  });

export const grokImagine15: ModelDef = grok({
  id: 'grok-imagine-1.5',
  title: 'Grok Imagine 1.5',
  summary: 'Text or photo to video of 6, 10 or 15 s with sound at 480p or 720p.',
  duration: { min: 6, max: 15, only: [6, 10, 15], default: 6 },
  price: { unit: 'second', by: 'resolution', rates: rates({ '480p': '0.030', '720p': '0.060' }) },
});

export const grokImagine: ModelDef = grok({
  id: 'grok-imagine',
  title: 'Grok Imagine',
  summary: 'Text or photo to video of 6 or 10 s with sound at 480p or 720p.',
  duration: { min: 6, max: 10, only: [6, 10], default: 6 },
  price: { unit: 'second', by: 'resolution', rates: rates({ '480p': '0.020', '720p': '0.040' }) },
});
