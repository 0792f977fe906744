// Pixel sizes the local backend renders; docs/local-backend.md shows the same table (a test keeps them equal).

/** Aspect ratios the local backend renders, as `width:height`. */
export const ASPECT_RATIOS = ['1:1', '16:9', '9:16', '4:3', '3:4', '21:9', '3:2', '2:3', '4:5', '5:4'] as const;
export type AspectRatio = (typeof ASPECT_RATIOS)[number];

/** `adaptive` / `auto` mean "follow the input"; with no input to follow, images are square and videos 16:9. */
export const DEFAULT_IMAGE_ASPECT: AspectRatio = '1:1';
export const DEFAULT_VIDEO_ASPECT: AspectRatio = '16:9';
const FOLLOW_INPUT = new Set(['adaptive', 'auto']);

export const VIDEO_RESOLUTIONS = ['480p', '720p', '1080p'] as const;
export type VideoResolution = (typeof VIDEO_RESOLUTIONS)[number];

export const SIZE_CLASSES = ['1K', '2K', '4K'] as const;

export interface Size {
  width: number;
  height: number;
}

/** Largest side we render: beyond this a "resolution" is a mistake, not a request. */
const MAX_SIDE = 8192;
const MIN_SIDE = 16;

function ratio(aspect: string | undefined, fallback: AspectRatio): readonly [number, number] {
  const name = aspect === undefined || FOLLOW_INPUT.has(aspect) ? fallback : aspect;
  if (!(ASPECT_RATIOS as readonly string[]).includes(name)) {
    throw new RangeError(`aspect ratio must be one of ${ASPECT_RATIOS.join(', ')}, adaptive or auto (got ${JSON.stringify(aspect)})`);
  }
  const [w, h] = name.split(':').map(Number);
  return [w!, h!];
}

function roundTo(value: number, step: number): number {
  return Math.max(step, Math.round(value / step) * step);
}

/** Long side `long`, short side from the ratio rounded to `step`; orientation from the ratio. */
function fit(long: number, [w, h]: readonly [number, number], step: number): Size {
  const short = roundTo((long * Math.min(w, h)) / Math.max(w, h), step);
  return w >= h ? { width: long, height: short } : { width: short, height: long };
}

/**
 * Image size for a size class and aspect ratio. `1K`/`2K`/`4K` (any `<n>K`) put 1024·n pixels on the long side
 * and round the short side to a multiple of 8; an explicit `WxH` (also `W*H`, `W×H`) is used as given.
 */
export function imageSize(sizeClass: string | undefined, aspect?: string): Size {
  const cls = (sizeClass ?? '1K').trim();
  const explicit = /^(\d{1,5})\s*[x*×]\s*(\d{1,5})$/i.exec(cls);
  if (explicit) {
    const size = { width: Number(explicit[1]), height: Number(explicit[2]) };
    if ([size.width, size.height].some((s) => s < MIN_SIDE || s > MAX_SIDE)) {
      throw new RangeError(`image size sides must be ${MIN_SIDE} to ${MAX_SIDE} pixels (got ${JSON.stringify(sizeClass)})`);
    }
    return size;
  }
  const k = cls.toLowerCase() === 'auto' ? 1 : Number(/^(\d+(?:\.\d+)?)K$/i.exec(cls)?.[1] ?? NaN);
  const long = Math.round(k * 1024);
  if (!(long >= MIN_SIDE * 8 && long <= MAX_SIDE)) {
    throw new RangeError(`image size must be ${SIZE_CLASSES.join(', ')} or WxH (got ${JSON.stringify(sizeClass)})`);
  }
  return fit(long, ratio(aspect, DEFAULT_IMAGE_ASPECT), 8);
}

/**
 * Video frame size: the resolution's number is the short side (720p 16:9 = 1280x720, 9:16 = 720x1280,
 * 1:1 = 720x720); the long side is rounded to an even number, as H.264 with 4:2:0 chroma requires.
 */
export function videoSize(resolution: string, aspect?: string): Size {
  if (!(VIDEO_RESOLUTIONS as readonly string[]).includes(resolution)) {
    throw new RangeError(`video resolution must be one of ${VIDEO_RESOLUTIONS.join(', ')} (got ${JSON.stringify(resolution)})`);
  }
  const short = Number.parseInt(resolution, 10);
  const [w, h] = ratio(aspect, DEFAULT_VIDEO_ASPECT);
  const long = roundTo((short * Math.max(w, h)) / Math.min(w, h), 2);
  return w >= h ? { width: long, height: short } : { width: short, height: long };
}
