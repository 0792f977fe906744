import type { ConfigError } from '../config.js';
import { choice, decimal, flag, link, links, taskId, text, whole } from './fields.js';
import type { LinkRules } from './links.js';
import type { Condition, Definition, FieldSpec } from './format.js';
import type { Cond } from './rules.js';
import type { ClipLimits, FieldDef, ImageLimits, MediaKind, MediaLimits } from './types.js';

/**
 * The `inputs` of a definition → the runtime fields (fields.ts builders, so every field reads,
 * refuses and describes itself exactly as the hand-written models did) and the media limits the
 * upload checks and `/models` use.
 */

export type Fail = (where: string, why: string) => ConfigError;

/** Formats GenGate stores for uploads (DECISIONS §10): the default `formats` of a media input. */
export const UPLOAD_FORMATS: Readonly<Record<MediaKind, readonly string[]>> = { image: ['JPG', 'PNG', 'WebP'], video: ['MP4', 'MOV'], audio: ['MP3', 'WAV'] };
/** Upload size limits in MB (DECISIONS §10): the default `upload_mb`. */
const UPLOAD_MB: Readonly<Record<MediaKind, number>> = { image: 30, video: 200, audio: 200 };
/** The clip lists the engine trims and prices, by their kind (src/catalog/media.ts, src/pricing/quote.ts). */
const CLIP_FIELDS: Readonly<Record<string, MediaKind>> = { video_urls: 'video', audio_urls: 'audio' };
/** Single photo links with a meaning of their own (frames). */
const FRAME_FIELDS = ['first_frame_url', 'last_frame_url'];

type Media = Extract<FieldSpec, { type: 'media' }>;

function buildField(name: string, spec: FieldSpec, at: string, fail: Fail): FieldDef {
  const { description } = spec;
  const withDefault = <T>(d: T | undefined) => (d === undefined ? {} : { default: d });
  switch (spec.type) {
    case 'text':
      return text({ max: spec.max, description });
    case 'choice': {
      const values = spec.values as [string, ...string[]];
      if (new Set(values.map((v) => v.toLowerCase())).size !== values.length)
        throw fail(`${at}.values`, 'lists a value twice (values match regardless of case)');
      if (spec.default !== undefined && !values.includes(spec.default))
        throw fail(`${at}.default`, `must be one of the values (got ${JSON.stringify(spec.default)})`);
      for (const [k, v] of Object.entries(spec.same ?? {}))
        if (!values.includes(v)) throw fail(`${at}.same.${k}`, `must be one of the values (got ${JSON.stringify(v)})`);
      return choice(values, { ...withDefault(spec.default), description, ...(spec.same ? { same: spec.same } : {}) });
    }
    case 'integer':
    case 'number': {
      if (spec.min > spec.max) throw fail(`${at}.min`, `must not be above max (${spec.max})`);
      const common = { min: spec.min, max: spec.max, ...(spec.auto ? { auto: true } : {}), ...withDefault(spec.default), description };
      let field: FieldDef;
      if (spec.type === 'integer') {
        const bad = spec.only?.find((n) => n < spec.min || n > spec.max);
        if (bad !== undefined) throw fail(`${at}.only`, `lists ${bad}, outside min..max (${spec.min} to ${spec.max})`);
        field = whole({ ...common, ...(spec.only ? { only: spec.only } : {}) });
      } else field = decimal({ ...common, ...(spec.step ? { step: spec.step } : {}) });
      if (spec.default !== undefined) checkDefault(field, name, spec.default, at, fail);
      return field;
    }
    case 'boolean':
      return flag({ ...withDefault(spec.default), description });
    case 'task':
      return taskId(description);
    case 'media':
      return mediaField(name, spec, at, fail);
  }
}

/** A default must be a value the field itself accepts. */
function checkDefault(field: FieldDef, name: string, value: unknown, at: string, fail: Fail): void {
  try {
    field.read(value, { path: `input.${name}`, model: 'this model' });
  } catch (e) {
    throw fail(`${at}.default`, (e as Error).message);
  }
}

function linkRules(spec: Media, at: string, fail: Fail): LinkRules {
  if (spec.accepts !== 'image' && (spec.link_formats || spec.assets)) throw fail(at, 'link_formats and assets are for photos only');
  return {
    kind: spec.accepts,
    formats: spec.formats ?? UPLOAD_FORMATS[spec.accepts],
    ...(spec.accepts === 'image' ? { linkFormats: spec.link_formats ?? [], assets: spec.assets ?? false } : {}),
  };
}

function mediaField(name: string, spec: Media, at: string, fail: Fail): FieldDef {
  const clipKind = CLIP_FIELDS[name];
  if (spec.accepts !== 'image' && clipKind !== spec.accepts) {
    throw fail(at, `a ${spec.accepts} input must be the list named ${spec.accepts}_urls (the engine trims and bills clips by that name)`);
  }
  if (clipKind && (spec.accepts !== clipKind || !spec.count || !spec.seconds)) {
    throw fail(at, `${name} is the list of ${clipKind} clips: accepts ${clipKind}, with count and seconds`);
  }
  if (FRAME_FIELDS.includes(name) && (spec.accepts !== 'image' || spec.count)) throw fail(at, `${name} is a single photo link (accepts image, no count)`);
  if (spec.accepts === 'image' && spec.seconds) throw fail(`${at}.seconds`, 'photos have no seconds');
  if (spec.alone !== undefined && name !== 'audio_urls') throw fail(`${at}.alone`, 'is for audio_urls only');
  const rules = linkRules(spec, at, fail);
  if (!spec.count) return link(rules, spec.description);
  if ((spec.count.min ?? 0) > spec.count.max) throw fail(`${at}.count.min`, `must not be above count.max (${spec.count.max})`);
  return links(rules, { max: spec.count.max, ...(spec.count.min ? { min: spec.count.min } : {}), description: spec.description });
}

/** The fields of a definition, in its order. */
export function buildFields(def: Definition, fail: Fail): Map<string, FieldDef> {
  const fields = new Map<string, FieldDef>();
  for (const [name, spec] of Object.entries(def.inputs)) fields.set(name, buildField(name, spec, `inputs.${name}`, fail));
  if (fields.size === 0) throw fail('inputs', 'must have at least one input field');
  return fields;
}

/** The media limits of a definition: its photo list, frames and clip lists. */
export function mediaLimits(def: Definition, fail: Fail): MediaLimits {
  const media = Object.entries(def.inputs).filter((e): e is [string, Media] => e[1].type === 'media');
  const photoLists = media.filter(([, s]) => s.accepts === 'image' && s.count);
  if (photoLists.length > 1) throw fail(`inputs.${photoLists[1]![0]}`, `a model has at most one list of photos (already ${photoLists[0]![0]})`);
  const out: { -readonly [K in keyof MediaLimits]: MediaLimits[K] } = {};
  const photos = photoLists[0];
  if (photos) {
    const [field, s] = photos;
    const images: ImageLimits = {
      field,
      min: s.count!.min ?? 0,
      max: s.count!.max,
      formats: s.formats ?? UPLOAD_FORMATS.image,
      linkFormats: s.link_formats ?? [],
      assets: s.assets ?? false,
      uploadMb: s.upload_mb ?? UPLOAD_MB.image,
    };
    out.images = images;
  }
  if (def.inputs.first_frame_url) out.frames = true;
  else if (def.inputs.last_frame_url) throw fail('inputs.last_frame_url', 'needs first_frame_url');
  for (const [field, s] of media) {
    if (!CLIP_FIELDS[field]) continue;
    const clips: ClipLimits = {
      max: s.count!.max,
      totalSeconds: s.seconds!.total,
      ...(s.seconds!.each ? { clipSeconds: { ...s.seconds!.each } } : {}),
      formats: s.formats ?? UPLOAD_FORMATS[s.accepts],
      uploadMb: s.upload_mb ?? UPLOAD_MB[s.accepts],
    };
    if (field === 'video_urls') out.videos = clips;
    else out.audios = { ...clips, alone: s.alone ?? false };
  }
  return out;
}

/** A condition's values read through their fields, so rules compare normalised values. */
export function condition(cond: Condition, fields: ReadonlyMap<string, FieldDef>, at: string, fail: Fail): Cond {
  return Object.entries(cond).map(([field, expected]) => {
    const def = fields.get(field);
    if (!def) throw fail(`${at}.${field}`, `${field} is not an input field`);
    const values = (Array.isArray(expected) ? expected : [expected]).map((v) => {
      try {
        return def.read(v, { path: `input.${field}`, model: 'this model' });
      } catch (e) {
        throw fail(`${at}.${field}`, (e as Error).message);
      }
    });
    return [field, values] as const;
  });
}
