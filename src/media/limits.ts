import type { MediaInfo } from './probe.js';

/**
 * Largest video GenGate decodes (decision 0302). Memory and time of a conversion grow with the
 * pixels of a frame and the number of frames, not with the file's bytes: a 2 MB MOV of one
 * 8192×8192 frame took 2.75 GB to convert. The defaults cover what phones and cameras record
 * (4K DCI, up to 120 fps) for the 30 s an upload may last.
 */
export interface VideoLimits {
  /** Longest side in pixels. */
  maxSide: number;
  /** Pixels of one frame (width × height). */
  maxPixels: number;
  /** Frames per second. */
  maxFps: number;
  /** Frames in the whole clip. */
  maxFrames: number;
}

/** The defaults of UPLOAD_MAX_VIDEO_SIDE, _PIXELS, _FPS and _FRAMES. */
export const DEFAULT_VIDEO_LIMITS: VideoLimits = { maxSide: 4096, maxPixels: 4096 * 2160, maxFps: 120, maxFrames: 3600 };

/** How ffmpeg runs on this host: threads per run, and the video limits every conversion and trim checks first. */
export interface MediaSettings {
  threads: number;
  video: VideoLimits;
}

const current: MediaSettings = { threads: 2, video: { ...DEFAULT_VIDEO_LIMITS } };

/** Sets the process-wide media settings (once at start, from the configuration; tests may change them). */
export function configureMedia(settings: Partial<MediaSettings>): void {
  if (settings.threads !== undefined) current.threads = settings.threads;
  if (settings.video) current.video = { ...settings.video };
}

/** The media settings in force. */
export function mediaSettings(): Readonly<MediaSettings> {
  return current;
}

/** ffmpeg options before an `-i` that bound the threads of its decoder and of the filters (ffmpeg's default is one per core). */
export function inputThreads(): string[] {
  return ['-filter_threads', String(current.threads), '-threads', String(current.threads)];
}

/** ffmpeg options after the codecs that bound the encoder's threads (libx264 otherwise starts 1.5 per core, each holding frames). */
export function outputThreads(): string[] {
  return ['-threads', String(current.threads)];
}

/**
 * Why a probed video is over the limits, as a sentence for the client, or null when it is
 * within them. Audio and still images pass (photos have their own pixel limit at upload).
 */
export function videoOverLimits(info: MediaInfo, limits: VideoLimits = current.video): string | null {
  if (info.kind !== 'video') return null;
  const { width = 0, height = 0 } = info;
  const pixels = width * height;
  if (Math.max(width, height) > limits.maxSide || pixels > limits.maxPixels) {
    return `file must be a video of at most ${limits.maxSide} pixels per side and ${limits.maxPixels} pixels per frame (got ${width}×${height} = ${pixels} pixels)`;
  }
  const fps = info.frameRate ?? 0;
  if (fps > limits.maxFps) return `file must be a video of at most ${limits.maxFps} frames per second (got ${Math.round(fps * 100) / 100})`;
  const frames = info.frames ?? 0;
  if (frames > limits.maxFrames) return `file must be a video of at most ${limits.maxFrames} frames (got ${frames})`;
  return null;
}
