import { copyFile, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { inputThreads, outputThreads, videoOverLimits } from './limits.js';
import { probe, type MediaInfo } from './probe.js';
import { MediaError, fileArg, runFfmpeg, type RunOptions } from './run.js';
import { sniffFile } from './sniff.js';

/** Codecs an MP4 can carry as they are; anything else in a MOV (ProRes, PCM...) is re-encoded. */
const MP4_VIDEO_CODECS = new Set(['h264', 'hevc', 'mpeg4', 'av1']);
const MP4_AUDIO_CODECS = new Set(['aac', 'mp3', 'alac', 'opus']);

/** Re-encoding settings for video we hand on to a backend: good quality, fast on small machines. */
const H264 = ['-c:v', 'libx264', '-preset', 'veryfast', '-crf', '20', '-pix_fmt', 'yuv420p'];
/**
 * Longest side of a re-encoded video. No model renders above 1080p, and libx264's memory grows with
 * the frame: a 4096×2160 encode held about 880 MB, the same clip at 1920×1012 about 260 MB (decision 0302).
 */
const ENCODE_MAX_SIDE = 1920;
/** Scales down to ENCODE_MAX_SIDE on the long side (aspect kept) and to even dimensions, which libx264 with yuv420p needs. */
const EVEN = ['-vf', `scale=w='if(gte(iw,ih),min(${ENCODE_MAX_SIDE},trunc(iw/2)*2),-2)':h='if(gte(iw,ih),-2,min(${ENCODE_MAX_SIDE},trunc(ih/2)*2))'`];
const AAC = ['-c:a', 'aac', '-b:a', '160k'];
/** First picture track and, when present, first audio track; drops timecode and data tracks MP4 cannot hold. */
const MAIN_TRACKS = ['-map', '0:v:0', '-map', '0:a:0?'];
const FASTSTART = ['-movflags', '+faststart'];

const AUDIO_ENCODERS: Record<string, readonly string[]> = {
  '.mp3': ['-c:a', 'libmp3lame', '-q:a', '2'],
  '.wav': ['-c:a', 'pcm_s16le'],
  '.m4a': AAC,
};
/** ffprobe format names of audio files that an output with this extension can take by stream copy. */
const AUDIO_COPY_FROM: Record<string, string> = { '.mp3': 'mp3', '.wav': 'wav' };

const LONG_JOB_MS = 10 * 60_000;

async function assertNonEmpty(file: string, op: string): Promise<void> {
  const size = await stat(file).then(
    (s) => s.size,
    () => 0,
  );
  if (size === 0) throw new MediaError(op, 'bad_output', `ffmpeg finished but ${file} is missing or empty`);
}

function assertDistinct(src: string, dst: string, op: string): void {
  if (path.resolve(src) === path.resolve(dst)) throw new MediaError(op, 'bad_output', 'source and destination are the same file');
}

function requireVideo(info: MediaInfo, op: string): void {
  if (info.kind !== 'video') throw new MediaError(op, 'unreadable', `expected a video, found ${info.kind} (${info.format})`);
}

/** Refuses, before anything decodes it, a video over the configured size, rate or frame limits. */
function requireWithinLimits(info: MediaInfo, op: string): void {
  const over = videoOverLimits(info);
  if (over) throw new MediaError(op, 'too_large', over);
}

/** Converts a MOV (or any video) to MP4: stream copy when the codecs fit, else H.264/AAC; returns the probed result. */
export async function movToMp4(src: string, dst: string, options: RunOptions = {}): Promise<MediaInfo> {
  const op = `movToMp4 ${src} -> ${dst}`;
  assertDistinct(src, dst, op);
  const info = await probe(src, options);
  requireVideo(info, op);
  requireWithinLimits(info, op);
  const copyable = MP4_VIDEO_CODECS.has(info.videoCodec ?? '') && (!info.hasAudio || MP4_AUDIO_CODECS.has(info.audioCodec ?? ''));
  const io = (codecs: readonly string[]) => [
    ...inputThreads(),
    '-i',
    fileArg(src),
    ...MAIN_TRACKS,
    ...codecs,
    ...outputThreads(),
    ...FASTSTART,
    '-f',
    'mp4',
    fileArg(dst),
  ];
  // Apple players want HEVC in MP4 tagged hvc1, not ffmpeg's default hev1.
  const copy = ['-c', 'copy', ...(info.videoCodec === 'hevc' ? ['-tag:v', 'hvc1'] : [])];
  const encode = [...EVEN, ...H264, ...AAC];
  if (copyable) {
    try {
      await runFfmpeg(io(copy), op, { timeoutMs: LONG_JOB_MS, ...options });
      await assertNonEmpty(dst, op);
      return await probe(dst, options);
    } catch (e) {
      // Some MOVs (odd edit lists, broken timestamps) refuse to be remuxed; re-encoding still works.
      if (!(e instanceof MediaError) || e.reason === 'timeout' || e.reason === 'aborted') throw e;
    }
  }
  await runFfmpeg(io(encode), op, { timeoutMs: LONG_JOB_MS, ...options });
  await assertNonEmpty(dst, op);
  return probe(dst, options);
}

/**
 * Keeps the first `seconds` of a video or audio file. Video is re-encoded (H.264/AAC, MP4) so the cut is exact,
 * not at the previous keyframe; MP3→MP3 and WAV→WAV are stream copies. A file already no longer than `seconds`
 * is copied unchanged (the spec: "shorter clips are unchanged"). `dst`'s extension picks the output: `.mp4` for
 * video; `.mp3`, `.wav` or `.m4a` for audio. Returns the probed result.
 */
export async function trim(src: string, dst: string, seconds: number, options: RunOptions = {}): Promise<MediaInfo> {
  const op = `trim ${src} -> ${dst} to ${seconds} s`;
  if (!Number.isFinite(seconds) || seconds <= 0) throw new RangeError(`trim: seconds must be > 0 (got ${seconds})`);
  assertDistinct(src, dst, op);
  const info = await probe(src, options);
  const ext = path.extname(dst).toLowerCase();
  if (info.kind === 'image') throw new MediaError(op, 'unreadable', `cannot trim a still image (${info.format})`);
  requireWithinLimits(info, op);
  if (info.kind === 'video' && ext !== '.mp4') throw new TypeError(`${op}: a trimmed video is written as .mp4 (got "${ext}")`);
  const audioEncoder = AUDIO_ENCODERS[ext];
  if (info.kind === 'audio' && !audioEncoder) {
    throw new TypeError(`${op}: audio is written as ${Object.keys(AUDIO_ENCODERS).join(', ')} (got "${ext}")`);
  }

  // Within a millisecond counts as "not longer": such a file is passed on as it is, in the requested container.
  if (info.durationSeconds <= seconds + 0.001) {
    const sameContainer = info.kind === 'audio' ? AUDIO_COPY_FROM[ext] === info.format : (await sniffFile(src))?.format === 'mp4';
    if (info.kind === 'video' && !sameContainer) return movToMp4(src, dst, options);
    if (sameContainer) {
      await copyFile(src, dst);
      return probe(dst, options);
    }
  }

  const limit = ['-t', String(seconds)];
  const codecs =
    info.kind === 'video'
      ? [...MAIN_TRACKS, ...EVEN, ...H264, ...AAC, ...FASTSTART]
      : ['-map', '0:a:0', ...(AUDIO_COPY_FROM[ext] === info.format ? ['-c:a', 'copy'] : audioEncoder!)];
  await runFfmpeg([...inputThreads(), '-i', fileArg(src), ...limit, ...codecs, ...outputThreads(), fileArg(dst)], op, { timeoutMs: LONG_JOB_MS, ...options });
  await assertNonEmpty(dst, op);
  return probe(dst, options);
}

/** Writes the last frame of a video as a PNG of the video's size; returns the probed PNG. */
export async function lastFrame(videoFile: string, dstPng: string, options: RunOptions = {}): Promise<MediaInfo> {
  const op = `lastFrame ${videoFile} -> ${dstPng}`;
  assertDistinct(videoFile, dstPng, op);
  // -update 1 rewrites the one output file for every decoded frame, so the last one written wins.
  const out = ['-an', '-update', '1', '-pix_fmt', 'rgb24', '-c:v', 'png', ...outputThreads(), '-f', 'image2', fileArg(dstPng)];
  await rm(dstPng, { force: true });
  // Seeking to 0.3 s before the end decodes only the tail: fast for long clips.
  await runFfmpeg([...inputThreads(), '-sseof', '-0.3', '-i', fileArg(videoFile), ...out], op, { timeoutMs: 60_000, ...options });
  const wrote = await stat(dstPng).then(
    (s) => s.size > 0,
    () => false,
  );
  if (!wrote) {
    // With no frame in the last 0.3 s (sparse or very short clips) decode the whole clip instead.
    await runFfmpeg([...inputThreads(), '-i', fileArg(videoFile), ...out], op, { timeoutMs: LONG_JOB_MS, ...options });
    await assertNonEmpty(dstPng, op);
  }
  return probe(dstPng, options);
}
