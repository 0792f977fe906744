import { Errors } from '../errors.js';
import { linkAllowed, type LinkRules } from './links.js';
import { UPLOAD_FORMATS } from './compile-fields.js';
import type { ClipLimits, MediaFact, MediaFacts, ModelDef } from './types.js';

/**
 * Checks supplied media against the facts the upload service knows (kind, format, whole
 * seconds) and plans the trims of DECISIONS §11, in its order: trim_video_to, trim_to_duration,
 * per-clip checks, auto_trim, total checks. Pure arithmetic on seconds: the upload service
 * applies the plan to the files with ffmpeg, and pricing uses the kept seconds.
 */

/** What happens to one supplied clip. */
export interface ClipPlan {
  readonly field: 'video_urls' | 'audio_urls';
  readonly index: number;
  readonly url: string;
  /** Seconds of the uploaded file. */
  readonly seconds: number;
  /** Seconds kept after trimming (equal to `seconds` when untouched). */
  readonly keepSeconds: number;
}

/** The result of a media check: every clip's plan, the facts with trimmed seconds, and the billable source seconds. */
export interface MediaCheck {
  readonly clips: readonly ClipPlan[];
  readonly facts: MediaFacts;
  /** Sum of the kept seconds of the supplied videos (what with-video pricing adds). */
  readonly sourceSeconds: number;
}

/** SPEC: in edit mode the clip must be at least 4 s. */
export const EDIT_MIN_SECONDS = 4;
/** DECISIONS §11: auto_trim never cuts a clip below 2 s. */
const AUTO_TRIM_FLOOR = 2;

function factOf(facts: MediaFacts, url: string): MediaFact | undefined {
  return Object.hasOwn(facts, url) ? facts[url] : undefined;
}

const inSeconds = (n: number) => `${n} s`;

/** The refusal for a video or audio link that is not a known, unexpired upload of the account. */
export function notAnUpload(path: string, model: string, url: string) {
  return Errors.invalid(
    `${path} must be a link returned by POST /api/v1/files/upload for this account that has not expired, for ${model} (got ${JSON.stringify(url)})`,
  );
}

/** Checks the media of a normalised input against `facts`; throws a refusal naming the link, the limit and what was found. */
export function planMedia(model: ModelDef, input: Record<string, unknown>, facts: MediaFacts): MediaCheck {
  checkPhotoFacts(model, input, facts);
  const clips: ClipPlan[] = [];
  const lists = [['video_urls', model.media.videos] as const, ['audio_urls', model.media.audios] as const];
  for (const [field, limits] of lists) {
    const urls = input[field];
    if (!limits || !Array.isArray(urls) || urls.length === 0) continue;
    clips.push(...planClips(model, input, field, urls as string[], limits, facts));
  }
  if (input.video_mode === 'edit') {
    for (const clip of clips) {
      if (clip.field === 'video_urls' && clip.keepSeconds < EDIT_MIN_SECONDS) {
        throw Errors.invalid(
          `input.video_urls[${clip.index}] must be a clip of at least ${EDIT_MIN_SECONDS} s in video_mode "edit" for ${model.id} (got a clip of ${inSeconds(clip.keepSeconds)}${clip.keepSeconds !== clip.seconds ? ' after trimming' : ''})`,
        );
      }
    }
  }
  const trimmed: Record<string, MediaFact> = { ...facts };
  let sourceSeconds = 0;
  for (const clip of clips) {
    trimmed[clip.url] = { ...trimmed[clip.url], seconds: clip.keepSeconds };
    if (clip.field === 'video_urls') sourceSeconds += clip.keepSeconds;
  }
  return { clips, facts: trimmed, sourceSeconds };
}

function planClips(
  model: ModelDef,
  input: Record<string, unknown>,
  field: ClipPlan['field'],
  urls: readonly string[],
  limits: ClipLimits,
  facts: MediaFacts,
): ClipPlan[] {
  const kind = field === 'video_urls' ? 'video' : 'audio';
  const rules: LinkRules = { kind, formats: limits.formats };
  const clipMax = limits.clipSeconds?.max ?? limits.totalSeconds;
  const keep = urls.map((url, index) => {
    const fact = factOf(facts, url);
    const path = `input.${field}[${index}]`;
    if (!fact || fact.seconds === undefined || !Number.isFinite(fact.seconds) || fact.seconds <= 0) {
      throw notAnUpload(path, model.id, url);
    }
    checkFact(fact, rules, path, model.id);
    let seconds = fact.seconds;
    if (typeof input.trim_video_to === 'number') seconds = Math.min(seconds, input.trim_video_to);
    if (input.trim_to_duration === true) {
      const target = input.duration === 'auto' || input.video_mode === 'edit' || typeof input.duration !== 'number' ? clipMax : input.duration;
      seconds = Math.min(seconds, target);
    }
    const range = limits.clipSeconds;
    if (range && (seconds < range.min || seconds > range.max)) {
      const hint = seconds > range.max ? '; set input.trim_video_to or input.trim_to_duration to keep only its start' : '';
      throw Errors.invalid(
        `${path} must be a clip of ${range.min} to ${range.max} s for ${model.id}${hint} (got a clip of ${inSeconds(seconds)}${seconds !== fact.seconds ? ' after trimming' : ''})`,
      );
    }
    return seconds;
  });
  const total = (list: readonly number[]) => list.reduce((a, b) => a + b, 0);
  if (input.auto_trim === true && total(keep) > limits.totalSeconds) {
    // Lower the longest clips to one common whole length, the largest that makes the total fit.
    for (let cap = Math.ceil(Math.max(...keep)) - 1; cap >= AUTO_TRIM_FLOOR; cap--) {
      const capped = keep.map((s) => Math.min(s, cap));
      if (total(capped) <= limits.totalSeconds) {
        keep.splice(0, keep.length, ...capped);
        break;
      }
    }
  }
  const sum = total(keep);
  if (sum > limits.totalSeconds) {
    const noun = kind === 'video' ? 'video' : 'audio';
    throw Errors.invalid(
      `input.${field} must add up to at most ${limits.totalSeconds} s of ${noun} for ${model.id}; set input.auto_trim true to trim the longest clips, or input.trim_video_to (got ${urls.length} clips of ${inSeconds(sum)} in total${input.auto_trim === true ? ' after trimming' : ''})`,
    );
  }
  return urls.map((url, index) => ({ field, index, url, seconds: factOf(facts, url)!.seconds!, keepSeconds: keep[index]! }));
}

/** A fact's kind and format must fit the field (the upload service sniffs them from the bytes). */
function checkFact(fact: MediaFact, rules: LinkRules, path: string, model: string): void {
  const badKind = fact.kind !== undefined && fact.kind !== rules.kind;
  const badFormat = fact.format !== undefined && !rules.formats.some((f) => f.toLowerCase() === fact.format!.toLowerCase());
  if (badKind || badFormat) {
    const got = badKind ? `${fact.kind === 'video' ? 'a' : 'an'} ${fact.kind} file` : `a ${fact.format} file`;
    throw Errors.invalid(`${path} must be ${linkAllowed(rules)} for ${model} (got ${got})`);
  }
}

/** Photos with facts (upload links) must be photos of an accepted format; links without facts are judged when fetched. */
function checkPhotoFacts(model: ModelDef, input: Record<string, unknown>, facts: MediaFacts): void {
  const images = model.media.images;
  const rules: LinkRules = { kind: 'image', formats: images?.formats ?? UPLOAD_FORMATS.image };
  const single = ['first_frame_url', 'last_frame_url'].filter((f) => typeof input[f] === 'string');
  const listed = images && Array.isArray(input[images.field]) ? (input[images.field] as string[]) : [];
  const paths: [string, string][] = [
    ...single.map((f): [string, string] => [`input.${f}`, input[f] as string]),
    ...listed.map((url, i): [string, string] => [`input.${images!.field}[${i}]`, url]),
  ];
  for (const [path, url] of paths) {
    const fact = factOf(facts, url);
    if (fact) checkFact(fact, rules, path, model.id);
  }
}
