import { MediaError, fileArg, runTool, type RunOptions } from './run.js';

export type MediaKind = 'image' | 'video' | 'audio';

/** What ffprobe says about a file, reduced to the facts GenGate uses. */
export interface MediaInfo {
  kind: MediaKind;
  /** ffprobe's format name, e.g. `mov,mp4,m4a,3gp,3g2,mj2`, `mp3`, `wav`, `png_pipe`. */
  format: string;
  /** Seconds; 0 for a still image. */
  durationSeconds: number;
  sizeBytes: number;
  /** Displayed size: swapped when the video carries a 90° rotation. */
  width?: number;
  height?: number;
  /** A real picture track (cover art in an MP3 does not count). */
  hasVideo: boolean;
  hasAudio: boolean;
  videoCodec?: string;
  audioCodec?: string;
  pixelFormat?: string;
  frameRate?: number;
  /** Frames of the video: the larger of the container's count and duration × frame rate. */
  frames?: number;
  sampleRate?: number;
  channels?: number;
  /** Degrees, as stored in the file (0 when none). */
  rotation: number;
}

export interface FfprobeStream {
  codec_type?: string;
  codec_name?: string;
  width?: number;
  height?: number;
  pix_fmt?: string;
  avg_frame_rate?: string;
  r_frame_rate?: string;
  nb_frames?: string;
  sample_rate?: string;
  channels?: number;
  duration?: string;
  disposition?: { attached_pic?: number };
  tags?: { rotate?: string };
  side_data_list?: Array<{ rotation?: number }>;
}

export interface FfprobeOutput {
  streams?: FfprobeStream[];
  format?: { format_name?: string; duration?: string; size?: string };
}

/** Formats in which a picture stream is a still image rather than a video. */
const STILL_FORMAT = /(^image2$|_pipe$|^gif$)/;

function num(value: string | number | undefined): number | undefined {
  const n = typeof value === 'number' ? value : Number.parseFloat(value ?? '');
  return Number.isFinite(n) ? n : undefined;
}

function rate(value: string | undefined): number | undefined {
  const [a, b] = (value ?? '').split('/').map(Number);
  if (a === undefined || !Number.isFinite(a) || a <= 0) return undefined;
  return b && Number.isFinite(b) ? a / b : a;
}

function rotationOf(stream: FfprobeStream): number {
  const fromSide = stream.side_data_list?.find((s) => typeof s.rotation === 'number')?.rotation;
  return num(fromSide) ?? num(stream.tags?.rotate) ?? 0;
}

/** Turns ffprobe's JSON into MediaInfo; throws MediaError('unreadable') when there is no usable stream. */
export function readProbeOutput(json: FfprobeOutput, op: string): MediaInfo {
  const streams = json.streams ?? [];
  const format = json.format?.format_name ?? 'unknown';
  const picture = streams.find((s) => s.codec_type === 'video' && !s.disposition?.attached_pic);
  const sound = streams.find((s) => s.codec_type === 'audio');
  if (!picture && !sound) throw new MediaError(op, 'unreadable', `no audio or video stream (format ${format})`);

  const still = picture !== undefined && STILL_FORMAT.test(format);
  const kind: MediaKind = still ? 'image' : picture ? 'video' : 'audio';
  const streamMax = Math.max(0, ...streams.map((s) => num(s.duration) ?? 0));
  const durationSeconds = still ? 0 : (num(json.format?.duration) ?? streamMax);
  if (kind !== 'image' && !(durationSeconds > 0)) {
    throw new MediaError(op, 'unreadable', `the ${kind} has no readable duration (format ${format})`);
  }

  const rotation = picture ? rotationOf(picture) : 0;
  const quarterTurn = Math.abs(rotation) % 180 === 90;
  const info: MediaInfo = {
    kind,
    format,
    durationSeconds,
    sizeBytes: num(json.format?.size) ?? 0,
    hasVideo: picture !== undefined && !still,
    hasAudio: sound !== undefined,
    rotation,
  };
  if (picture) {
    if (picture.width && picture.height) {
      info.width = quarterTurn ? picture.height : picture.width;
      info.height = quarterTurn ? picture.width : picture.height;
    }
    info.videoCodec = picture.codec_name;
    info.pixelFormat = picture.pix_fmt;
    if (!still) {
      info.frameRate = rate(picture.avg_frame_rate) ?? rate(picture.r_frame_rate);
      // The larger of the container's count and duration × rate: a header that under-counts does not pass.
      info.frames = Math.max(num(picture.nb_frames) ?? 0, Math.ceil(durationSeconds * (info.frameRate ?? 0) - 1e-6));
    }
  }
  if (sound) {
    info.audioCodec = sound.codec_name;
    info.sampleRate = num(sound.sample_rate);
    info.channels = sound.channels;
  }
  return info;
}

/** Probes a media file with ffprobe; throws MediaError (`unreadable` for files that are not readable media). */
export async function probe(file: string, options: RunOptions = {}): Promise<MediaInfo> {
  const op = `probe ${file}`;
  const args = ['-v', 'error', '-print_format', 'json', '-show_format', '-show_streams', fileArg(file)];
  let stdout: Buffer;
  try {
    ({ stdout } = await runTool('ffprobe', args, op, { timeoutMs: 30_000, ...options }));
  } catch (e) {
    // A non-zero exit from ffprobe means it could not parse the file: the input's fault, not ours.
    if (e instanceof MediaError && e.reason === 'failed') {
      throw new MediaError(op, 'unreadable', e.message.slice(op.length + 2), e.stderr);
    }
    throw e;
  }
  let json: FfprobeOutput;
  try {
    json = JSON.parse(stdout.toString('utf8')) as FfprobeOutput;
  } catch {
    throw new MediaError(op, 'bad_output', 'ffprobe printed something that is not JSON');
  }
  return readProbeOutput(json, op);
}

/** Whole seconds of a duration (DECISIONS §5): rounded half up, at least 1. */
export function wholeSeconds(durationSeconds: number): number {
  if (!Number.isFinite(durationSeconds) || durationSeconds < 0) {
    throw new RangeError(`duration must be a finite number of seconds >= 0 (got ${durationSeconds})`);
  }
  // Tolerate float noise such as 2.4999999999 coming from 2.5 after arithmetic.
  return Math.max(1, Math.floor(durationSeconds + 0.5 + 1e-9));
}
