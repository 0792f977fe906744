import { fileArg, probe, runFfmpeg, type MediaInfo } from '../../media/index.js';
import { videoSize } from './dimensions.js';
import { writeAtomically, type RenderedFile } from './output.js';
import { effectiveSeed, seededRandom } from './random.js';

export { renderImage, type ImageRenderParams } from './image.js';
export { renderKey } from './random.js';
export type { RenderedFile } from './output.js';

/** What the local backend needs to make a video. */
export interface VideoRenderParams {
  resolution: string;
  /** One of ASPECT_RATIOS, or adaptive/auto (16:9). */
  aspectRatio?: string;
  /** Length in seconds, fractions allowed (automatic length picks any). */
  seconds: number;
  withAudio: boolean;
  seed?: number;
  prompt?: string;
  /** Container; `mov` for models with output_format mov. Default mp4. */
  container?: 'mp4' | 'mov';
}

/** What the local backend needs to make the two music tracks. */
export interface TracksRenderParams {
  seconds: number;
  seed?: number;
  prompt?: string;
}

const FPS = 24;
const MAX_SECONDS = 600;

function checkSeconds(seconds: number, what: string): void {
  if (!Number.isFinite(seconds) || seconds <= 0 || seconds > MAX_SECONDS) {
    throw new RangeError(`${what}: seconds must be > 0 and at most ${MAX_SECONDS} (got ${seconds})`);
  }
}

/** A colour as ffmpeg's 0xRRGGBB, each channel drawn from [min, max) so backgrounds stay dark and boxes bright. */
function colour(random: () => number, min: number, max: number): string {
  const channel = () =>
    Math.floor(min + random() * (max - min))
      .toString(16)
      .padStart(2, '0');
  return `0x${channel()}${channel()}${channel()}`;
}

function described(file: string, mime: string, info: MediaInfo): RenderedFile {
  const out: RenderedFile = { path: file, mime, bytes: info.sizeBytes, durationSeconds: info.durationSeconds, hasAudio: info.hasAudio };
  if (info.width !== undefined && info.height !== undefined) Object.assign(out, { width: info.width, height: info.height });
  return out;
}

/**
 * Renders an H.264/yuv420p video (AAC tone when withAudio) of the requested resolution, aspect ratio and length:
 * a seeded background with two moving boxes. Flat colour keeps ultrafast x264 quick; returns the probed file.
 */
export async function renderVideo(params: VideoRenderParams, dst: string, signal?: AbortSignal): Promise<RenderedFile> {
  checkSeconds(params.seconds, 'renderVideo');
  const { width, height } = videoSize(params.resolution, params.aspectRatio);
  const random = seededRandom(effectiveSeed(params.seed, params.prompt));
  const seconds = String(params.seconds);
  const box = Math.max(16, Math.round(height / 6));
  // Speeds in pixels per second, seeded, so different seeds move differently; mod() wraps the box around.
  const [vx, vy] = [width / (2 + random() * 4), height / (2 + random() * 4)];
  const [background, first, second] = [colour(random, 0, 96), colour(random, 128, 256), colour(random, 128, 256)];
  const video = [
    'format=yuv420p',
    `drawbox=x='mod(t*${vx.toFixed(2)},${width - box})':y=${Math.round(height / 4)}:w=${box}:h=${box}:color=${first}:t=fill`,
    `drawbox=x=${Math.round(width / 2)}:y='mod(t*${vy.toFixed(2)},${height - box})':w=${box}:h=${box}:color=${second}:t=fill`,
  ].join(',');
  const inputs = ['-f', 'lavfi', '-i', `color=c=${background}:s=${width}x${height}:r=${FPS}:d=${seconds}`];
  const audio: string[] = [];
  if (params.withAudio) {
    const tone = Math.round(220 + random() * 660);
    inputs.push('-f', 'lavfi', '-i', `sine=f=${tone}:sample_rate=48000:d=${seconds}`);
    audio.push('-map', '1:a', '-c:a', 'aac', '-b:a', '96k');
  }
  const container = params.container ?? 'mp4';
  const args = [
    ...inputs,
    '-map',
    '0:v',
    '-vf',
    video,
    // A keyframe every 2 s keeps seeking (and lastFrame) cheap at a small cost in size.
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-crf',
    '28',
    '-g',
    String(FPS * 2),
    '-pix_fmt',
    'yuv420p',
    ...audio,
    '-movflags',
    '+faststart',
    '-f',
    container,
  ];
  const op = `renderVideo ${params.resolution} ${width}x${height} ${seconds}s -> ${dst}`;
  const info = await writeAtomically(dst, async (tmp) => {
    await runFfmpeg([...args, fileArg(tmp)], op, { timeoutMs: 5 * 60_000, ...(signal ? { signal } : {}) });
    return probe(tmp);
  });
  return described(dst, container === 'mov' ? 'video/quicktime' : 'video/mp4', info);
}

/**
 * Renders the two music tracks of one run as MP3s: audibly different (a pulsing tone and a beeping one at
 * other pitches), same length. Returns both, probed.
 */
export async function renderTracks(params: TracksRenderParams, dst: readonly [string, string], signal?: AbortSignal): Promise<[RenderedFile, RenderedFile]> {
  checkSeconds(params.seconds, 'renderTracks');
  const random = seededRandom(effectiveSeed(params.seed, params.prompt));
  const seconds = String(params.seconds);
  // Disjoint pitch ranges guarantee the two tracks differ whatever the seed.
  const low = Math.round(196 + random() * 196);
  const high = Math.round(440 + random() * 440);
  const sources = [
    // A tremolo made with a volume expression: ffmpeg's tremolo filter aborts for about a quarter
    // of the frequencies in this range on the npm-shipped ffmpeg (4.x), e.g. 4.99 Hz.
    { input: `sine=f=${low}:sample_rate=44100:d=${seconds}`, filter: `volume='0.65+0.35*sin(2*PI*t*${(1 + random() * 4).toFixed(2)})':eval=frame` },
    { input: `sine=f=${high}:beep_factor=2:sample_rate=44100:d=${seconds}`, filter: 'volume=0.8' },
  ];
  const rendered = sources.map(async ({ input, filter }, i) => {
    const file = dst[i]!;
    // Mono at lame's fastest setting: about 45x real time on one core, so a 6-minute song takes ~8 s.
    const args = ['-f', 'lavfi', '-i', input, '-af', filter, '-c:a', 'libmp3lame', '-b:a', '128k', '-compression_level', '9'];
    const title = ['-metadata', `title=GenGate local track ${i + 1}`, '-f', 'mp3'];
    const info = await writeAtomically(file, async (tmp) => {
      await runFfmpeg([...args, ...title, fileArg(tmp)], `renderTracks track ${i + 1} -> ${file}`, { timeoutMs: 5 * 60_000, ...(signal ? { signal } : {}) });
      return probe(tmp);
    });
    return described(file, 'audio/mpeg', info);
  });
  const [a, b] = await Promise.all(rendered);
  return [a!, b!];
}
