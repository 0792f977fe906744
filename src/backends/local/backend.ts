import { randomBytes } from 'node:crypto';
import { mkdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { DEMO_DEFAULTS, OUTPUT_OF_KIND, type DemoRecipe, type DemoRole } from '../../catalog/index.js';
import type { Clock } from '../../clock.js';
import { MediaError, lastFrame } from '../../media/index.js';
import { BackendFailure, type Backend, type BackendJob, type BackendOutput, type BackendStatus, type CancelOutcome, type OutputFile } from '../types.js';
import { AFTER_WORK, AT_SUBMIT, faultOf } from './faults.js';
import { effectiveSeed, seededRandom } from './random.js';
import { removeLeftovers, writeAtomically } from './output.js';
import { renderImage, renderKey, renderTracks, renderVideo } from './render.js';
import { ASPECT_RATIOS, imageSize } from './dimensions.js';

/** Settings of the local backend. */
export interface LocalOptions {
  /** How long a job stays queued, then generating (ms). */
  queueMs: number;
  generateMs: number;
  /** LOCAL_FAIL: a fault for every job ('none' for none). */
  fail: string;
  /** Folder for rendered files, reused for equal parameters. */
  cacheDir: string;
  /** The demo recipe of a model (which inputs the render reads); the fields of the default names when absent. */
  recipe?: (model: string) => DemoRecipe | undefined;
}

/** While generating, progress is reported about this often (a person polling sees it move). */
const PROGRESS_TICK_MS = 1_000;
/** Seconds of a song whose duration is automatic: long enough to be a song, short enough to render quickly. */
const AUTO_SONG_SECONDS = 30;
/** Automatic video length is seeded in this range, so the partial refund of unused seconds is visible. */
const AUTO_VIDEO_SECONDS = [4, 12] as const;
/** Scratch files older than this were left by killed processes: three times the longest render (ffmpeg is killed after 5 minutes). */
export const LEFTOVER_AGE_MS = 15 * 60_000;

// Numbers in text too: upstream-shaped models (the kie.ai market) take `duration: "5"` as a choice.
const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : typeof v === 'string' && /^\d+(\.\d+)?$/.test(v) ? Number(v) : undefined);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
/** A ratio the renderer draws, else undefined (the kind's default): a market model's "1:4" or "8:1" still gets a demo. */
const demoAspect = (v: unknown): string | undefined => {
  const a = str(v);
  return a !== undefined && ((ASPECT_RATIOS as readonly string[]).includes(a) || a === 'auto' || a === 'adaptive') ? a : undefined;
};
/** An image size the renderer draws ("1K", "2K", "WxH" ...); others (a market model's "basic") draw at the default. */
const demoSize = (v: unknown): string | undefined => {
  const s = str(v);
  try {
    return s === undefined ? undefined : (imageSize(s), s);
  } catch {
    return undefined;
  }
};
/** A video resolution the renderer draws: "768P" and "1080P" of market models are taken as the nearest of 480p, 720p, 1080p. */
const demoResolution = (v: unknown): string => {
  const lines = Number(/^(\d{3,4})p$/i.exec(str(v) ?? '')?.[1] ?? 720);
  return lines <= 540 ? '480p' : lines < 1000 ? '720p' : '1080p';
};

/**
 * The built-in backend (DECISIONS §16): renders real media offline. It keeps no state of its own:
 * the reference holds the hand-off time and progress follows the clock, so a job survives a
 * restart of the process; renders are cached by their parameters, so a repeat costs a file copy.
 */
export class LocalBackend implements Backend {
  readonly name = 'local';
  /** Renders in progress by cache key: the tasks waiting for each, and what stops it when none is left. */
  private readonly inFlight = new Map<string, { done: Promise<void>; waiters: Set<string>; controller: AbortController }>();
  /** The one clean-up of leftovers per process, before its first use of the cache. */
  private leftovers: Promise<unknown> | null = null;

  constructor(
    private readonly clock: Clock,
    private readonly options: LocalOptions,
  ) {}

  async submit(job: BackendJob): Promise<string> {
    const fault = faultOf(job.input, this.options.fail);
    if (fault === 'throw') throw new Error('local backend: simulated crash at hand-off');
    const refusal = fault ? AT_SUBMIT[fault] : undefined;
    if (refusal) throw new BackendFailure(refusal[0], refusal[1]);
    return `local:${this.clock.now()}`;
  }

  async progress(job: BackendJob, ref: string): Promise<BackendStatus> {
    const since = this.clock.now() - Number(ref.slice('local:'.length));
    const { queueMs, generateMs } = this.options;
    // The state changes at known times, so the engine is told when to look again instead of polling.
    if (since < queueMs) return { state: 'queued', recheckMs: queueMs - since };
    const fault = faultOf(job.input, this.options.fail);
    if (fault === 'hang') return { state: 'running', progress: 50, recheckMs: PROGRESS_TICK_MS };
    if (since < queueMs + generateMs) {
      return {
        state: 'running',
        progress: Math.floor(((since - queueMs) / generateMs) * 99),
        recheckMs: Math.min(PROGRESS_TICK_MS, queueMs + generateMs - since),
      };
    }
    const failure = fault ? AFTER_WORK[fault] : undefined;
    if (failure) return { state: 'failed', kind: failure[0], message: failure[1] };
    return { state: 'done' };
  }

  async results(job: BackendJob): Promise<BackendOutput> {
    try {
      return await this.render(job);
    } catch (e) {
      // The renderer's own words name files under DATA_DIR and quote ffmpeg: the engine logs them
      // (the cause), the task keeps only what went wrong. Still a plain Error: the engine retries it.
      throw new Error(`the local renderer could not make the ${job.kind}: ${renderFailure(e)}`, { cause: e });
    }
  }

  private async render(job: BackendJob): Promise<BackendOutput> {
    if (faultOf(job.input, this.options.fail) === 'garbage') return this.garbage();
    const input = job.input;
    const recipe = { ...DEMO_DEFAULTS, ...this.options.recipe?.(job.model) };
    const of = (role: DemoRole) => input[recipe[role]];
    const seed = num(input.seed);
    const prompt = str(of('prompt')) ?? str(input.title) ?? '';
    const output = OUTPUT_OF_KIND[job.kind];
    if (output.media === 'image') {
      const format = of('format') === 'jpeg' ? 'jpeg' : 'png';
      const params = { aspectRatio: demoAspect(of('aspect')), sizeClass: demoSize(of('size')), format, seed, prompt } as const;
      const file = await this.cached(job.taskId, 'image', params, format === 'png' ? 'png' : 'jpg', (dst) => renderImage(params, dst));
      return { files: [{ path: file, mime: format === 'png' ? 'image/png' : 'image/jpeg' }] };
    }
    if (output.media === 'audio') {
      const seconds = num(of('seconds')) ?? AUTO_SONG_SECONDS;
      const params = { seconds, seed, prompt };
      const key = renderKey('tracks', params);
      const dst = [path.join(this.options.cacheDir, `${key}-1.mp3`), path.join(this.options.cacheDir, `${key}-2.mp3`)] as const;
      // Each track lands whole (renderTracks writes atomically); a cache hit needs both.
      await this.once(job.taskId, key, dst, (signal) => renderTracks(params, dst, signal));
      // Two tracks are rendered (they differ whatever the seed); a kind with one file per run takes the first.
      return { files: dst.slice(0, output.files).map((p) => ({ path: p, mime: 'audio/mpeg' })), durationSeconds: seconds };
    }
    const seconds = this.videoSeconds(job, num(of('seconds')), seed, prompt);
    const container = of('format') === 'mov' ? 'mov' : 'mp4';
    const params = {
      resolution: demoResolution(of('size')),
      aspectRatio: demoAspect(of('aspect')),
      seconds,
      withAudio: of('sound') !== false,
      seed,
      prompt,
      container,
    } as const;
    const video = await this.cached(job.taskId, 'video', params, container, (dst, signal) => renderVideo(params, dst, signal));
    const out: { files: OutputFile[]; durationSeconds: number; lastFrame?: OutputFile } = {
      files: [{ path: video, mime: container === 'mov' ? 'video/quicktime' : 'video/mp4' }],
      durationSeconds: seconds,
    };
    if (of('lastFrame') === true) {
      const frame = await this.cached(job.taskId, 'last-frame', params, 'png', (dst, signal) =>
        writeAtomically(dst, (tmp) => lastFrame(video, tmp, { signal })),
      );
      out.lastFrame = { path: frame, mime: 'image/png' };
    }
    return out;
  }

  /**
   * Always `cancelled`: nothing is billed and no job is kept between steps, so a cancelled job is
   * simply never asked for again. A render in progress for the task is stopped (ffmpeg killed) unless
   * another task waits for the same render; the step that waited for it ends with no result to record.
   */
  async cancel(job: BackendJob): Promise<CancelOutcome> {
    for (const [key, render] of this.inFlight) {
      if (!render.waiters.delete(job.taskId)) continue;
      if (render.waiters.size > 0) continue;
      render.controller.abort(new Error(`task ${job.taskId} was cancelled`));
      this.inFlight.delete(key);
    }
    return 'cancelled';
  }

  /** Length of the video: the clip's length in edit mode, a seeded length when automatic, else the duration. */
  private videoSeconds(job: BackendJob, duration: number | undefined, seed: number | undefined, prompt: string): number {
    const { input, media } = job;
    const clips = Array.isArray(input.video_urls) ? (input.video_urls as string[]) : [];
    if (input.video_mode === 'edit' && clips[0]) {
      const fact = Object.hasOwn(media, clips[0]) ? media[clips[0]] : undefined;
      if (fact?.seconds) return fact.seconds;
    }
    if (duration !== undefined) return duration;
    const [min, max] = AUTO_VIDEO_SECONDS;
    return min + Math.floor(seededRandom(effectiveSeed(seed, prompt))() * (max - min + 1));
  }

  /** The cached render of `params`, rendering it first when missing. */
  private async cached(
    taskId: string,
    kind: string,
    params: object,
    ext: string,
    render: (dst: string, signal: AbortSignal) => Promise<unknown>,
  ): Promise<string> {
    const dst = path.join(this.options.cacheDir, `${renderKey(kind, params)}.${ext}`);
    await this.once(taskId, dst, [dst], (signal) => render(dst, signal));
    return dst;
  }

  /**
   * Renders at most once at a time per key in this process for every task that asks (`taskId`); files already there are reused. Every
   * renderer writes atomically (temporary name, then rename), so a process killed mid-render leaves
   * no partial file under a cache name; a render of several files counts only when all are there.
   */
  private async once(taskId: string, key: string, files: readonly string[], render: (signal: AbortSignal) => Promise<unknown>): Promise<void> {
    await this.removeLeftovers();
    if ((await Promise.all(files.map(exists))).every(Boolean)) return;
    let running = this.inFlight.get(key);
    if (!running) {
      const controller = new AbortController();
      const entry = { waiters: new Set<string>(), controller, done: Promise.resolve() };
      entry.done = (async () => {
        await mkdir(this.options.cacheDir, { recursive: true });
        await render(controller.signal);
      })().finally(() => {
        if (this.inFlight.get(key) === entry) this.inFlight.delete(key);
      });
      this.inFlight.set(key, entry);
      running = entry;
    }
    running.waiters.add(taskId);
    try {
      await running.done;
    } finally {
      running.waiters.delete(taskId);
    }
  }

  /**
   * Removes the partial files of renders whose process was killed (and old garbage outputs), once per
   * process before its first use of the cache; a failed clean-up only leaves files, it fails no render.
   */
  removeLeftovers(): Promise<unknown> {
    this.leftovers ??= removeLeftovers(this.options.cacheDir, LEFTOVER_AGE_MS).catch(() => 0);
    return this.leftovers;
  }

  /** A "PNG" of random bytes: what a broken upstream might hand back. */
  private async garbage(): Promise<BackendOutput> {
    await this.removeLeftovers();
    await mkdir(this.options.cacheDir, { recursive: true });
    const file = path.join(this.options.cacheDir, `garbage-${randomBytes(6).toString('hex')}.png`);
    await writeFile(file, randomBytes(512));
    return { files: [{ path: file, mime: 'image/png' }] };
  }
}

/** What went wrong in a render, without paths or tool output. */
function renderFailure(e: unknown): string {
  if (e instanceof MediaError) {
    if (e.reason === 'timeout') return 'ffmpeg took too long';
    if (e.reason === 'missing_binary') return 'ffmpeg is not available';
    return 'ffmpeg failed';
  }
  const code = (e as NodeJS.ErrnoException | null)?.code;
  return typeof code === 'string' && /^E[A-Z]+$/.test(code) ? `the render cache could not be written (${code})` : 'an unexpected error';
}

async function exists(file: string): Promise<boolean> {
  return stat(file).then(
    (s) => s.size > 0,
    () => false,
  );
}
