import { parseUsd } from '../../billing/index.js';
import type { DraftRules, FieldDef, MediaLimits, ModelDef, ModelKind, PriceRule, Rule } from '../types.js';

/** Formats GenGate stores for uploads (DECISIONS §10). */
export const PHOTO_FORMATS = ['JPG', 'PNG', 'WebP'] as const;
export const VIDEO_FORMATS = ['MP4', 'MOV'] as const;
export const AUDIO_FORMATS = ['MP3', 'WAV'] as const;
/** Upload size limits in MB (DECISIONS §10). */
export const PHOTO_UPLOAD_MB = 30;
export const CLIP_UPLOAD_MB = 200;
/** SPEC Limits: prompt length of video models. */
export const VIDEO_PROMPT_MAX = 30_000;

/** A list price in micro-USD from its USD text, so the tables read like the spec. */
export function usd(text: string): number {
  const micros = parseUsd(text);
  if (micros === null) throw new Error(`bad price ${text}`);
  return micros;
}

/** A rate table in micro-USD from USD texts keyed by resolution or quality. */
export function rates(table: Record<string, string>): Record<string, number> {
  return Object.fromEntries(Object.entries(table).map(([k, v]) => [k, usd(v)]));
}

/** Everything a model definition states; the rest gets defaults. */
export interface ModelSpec {
  id: string;
  aliases?: readonly string[];
  kind: ModelKind;
  title: string;
  summary: string;
  fields: Record<string, FieldDef>;
  rules?: readonly Rule[];
  media?: MediaLimits;
  price: PriceRule;
  autoLengthSeconds?: number;
  draft?: DraftRules;
  hints?: Record<string, string>;
}

/** Builds a model definition: enabled, routed to the built-in local backend (DECISIONS §16). */
export function defineModel(spec: ModelSpec): ModelDef {
  return {
    id: spec.id,
    aliases: spec.aliases ?? [],
    inputMaps: new Map(),
    kind: spec.kind,
    title: spec.title,
    summary: spec.summary,
    fields: new Map(Object.entries(spec.fields)),
    rules: spec.rules ?? [],
    media: spec.media ?? {},
    price: spec.price,
    ...(spec.autoLengthSeconds !== undefined ? { autoLengthSeconds: spec.autoLengthSeconds } : {}),
    ...(spec.draft ? { draft: spec.draft } : {}),
    hints: spec.hints ?? {},
    enabled: true,
    routes: [{ backend: 'local' }],
  };
}
