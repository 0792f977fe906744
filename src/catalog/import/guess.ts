import type { ModelKind } from '../types.js';

/**
 * Guesses `gengate models import` makes where an upstream's schema does not say (decision 3303):
 * which inputs are links and to what kind of media, and the kind of the model. Each guess carries
 * its reason, which the draft states next to it for the operator to confirm.
 */

type Json = Record<string, unknown>;
type MediaKind = 'image' | 'video' | 'audio';

export interface LinkKind {
  /** Undefined: a link of a kind the name and words do not tell. */
  readonly kind?: MediaKind;
  readonly why: string;
}

const KIND_WORDS: readonly [MediaKind, RegExp][] = [
  ['video', /video|clip|movie|footage/],
  ['audio', /audio|voice|speech|music|song|sound|wav|mp3/],
  ['image', /image|photo|picture|img|mask|frame|style_ref|face|portrait/],
];
/** Names of links whose kind is a file the model reads but not a medium GenGate checks (weights, archives). */
const NOT_MEDIA = /lora|weights|checkpoint|model_url|webhook|callback|zip|tar|safetensors|config|json/;

/** Whether a string (or each string of a list) is a link, and to what: `format: uri` or a name ending in _url(s)/_uri(s)/_link(s). */
export function linkKind(name: string, prop: Json, item: Json): LinkKind | undefined {
  const format = String(item.format ?? prop.format ?? '');
  const named = /(^|_)(url|urls|uri|uris|link|links)$/.test(name);
  if (format !== 'uri' && format !== 'url' && !named) return undefined;
  const lower = name.toLowerCase();
  if (NOT_MEDIA.test(lower)) return { why: `the name "${name}" names a file that is not a photo, clip or sound` };
  for (const [kind, re] of KIND_WORDS) if (re.test(lower)) return { kind, why: `guessed from the name "${name}"` };
  const text = `${String(prop.title ?? '')} ${String(prop.description ?? '')}`.toLowerCase();
  const mime = /\b(image|video|audio)\/[a-z0-9.+-]+/.exec(text);
  if (mime) return { kind: mime[1] as MediaKind, why: `guessed from the accepted types in its description (${mime[0]})` };
  for (const [kind, re] of KIND_WORDS) if (re.test(text)) return { kind, why: `guessed from its description` };
  return { why: `a link ("${name}") whose kind neither its name nor its description tells` };
}

/** fal's `x-fal-metadata.category` (text-to-image, image-to-video, text-to-speech, ...) → a model kind. */
export function kindOfCategory(category: string): ModelKind | undefined {
  const out = category.split('-to-').pop() ?? category;
  if (/video/.test(out)) return 'video';
  if (/image/.test(out)) return 'image';
  if (/speech/.test(out)) return 'speech';
  if (/audio|music/.test(out)) return 'audio';
  return undefined;
}

/** A model kind from its id and words, when the upstream does not say. */
export function kindOfWords(text: string): ModelKind {
  const t = text.toLowerCase();
  if (/video|veo|kling|hailuo|seedance|sora|runway|luma|wan[-/ ]?\d|minimax|pixverse|vidu|ltx/.test(t)) return 'video';
  if (/tts|text[- ]to[- ]speech|speech|voice/.test(t)) return 'speech';
  if (/music|audio|sound|song|suno|elevenlabs/.test(t)) return 'audio';
  return 'image';
}

/** "fal-ai/bytedance/seedream/v4/text-to-image" → "Bytedance Seedream V4 Text To Image": a title for the operator to reword. */
export function titleOf(id: string): string {
  const parts = id.split(/[/:]/).filter((p) => p && !/^fal-ai$/i.test(p));
  const title = parts
    .join(' ')
    .split(/[\s_-]+/)
    .filter(Boolean)
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join(' ');
  return (title || id).slice(0, 120);
}
