import { Errors, shown } from '../errors.js';
import type { MediaKind, Where } from './types.js';

/** What a link field accepts. */
export interface LinkRules {
  readonly kind: MediaKind;
  /** Formats of files GenGate stores (upload links). */
  readonly formats: readonly string[];
  /** Extra formats a public https photo link may have (seedance-2.5: BMP, TIFF, GIF, HEIC). */
  readonly linkFormats?: readonly string[];
  /** Whether `asset://` ids are accepted. */
  readonly assets?: boolean;
}

/** Options that depend on the running service. */
export interface LinkOptions {
  /** PUBLIC_BASE_URL: upload links are `${uploadBaseUrl}/files/...`. When set, video and audio links must be upload links. */
  readonly uploadBaseUrl?: string;
}

export const MAX_LINK_LENGTH = 2048;
const ASSET = /^asset:\/\/[A-Za-z0-9._-]{1,200}$/;

/** File name extensions we recognise; a link without one is judged by its bytes later. */
const EXTENSIONS: Readonly<Record<string, readonly [MediaKind, string]>> = {
  jpg: ['image', 'JPG'],
  jpeg: ['image', 'JPG'],
  png: ['image', 'PNG'],
  webp: ['image', 'WebP'],
  bmp: ['image', 'BMP'],
  tif: ['image', 'TIFF'],
  tiff: ['image', 'TIFF'],
  gif: ['image', 'GIF'],
  heic: ['image', 'HEIC'],
  heif: ['image', 'HEIC'],
  avif: ['image', 'AVIF'],
  svg: ['image', 'SVG'],
  mp4: ['video', 'MP4'],
  mov: ['video', 'MOV'],
  m4v: ['video', 'M4V'],
  webm: ['video', 'WebM'],
  mkv: ['video', 'MKV'],
  avi: ['video', 'AVI'],
  mp3: ['audio', 'MP3'],
  wav: ['audio', 'WAV'],
  m4a: ['audio', 'M4A'],
  aac: ['audio', 'AAC'],
  ogg: ['audio', 'OGG'],
  flac: ['audio', 'FLAC'],
  opus: ['audio', 'OPUS'],
};

const NOUN: Record<MediaKind, string> = { image: 'photo', video: 'video', audio: 'audio file' };

/** Joins values for prose: "A, B or C". */
export function orList(values: readonly string[]): string {
  if (values.length <= 1) return values.join('');
  return `${values.slice(0, -1).join(', ')} or ${values[values.length - 1]}`;
}

/** The phrase naming what a link field accepts, used after "must be". */
export function linkAllowed(rules: LinkRules): string {
  const noun = NOUN[rules.kind];
  if (rules.kind !== 'image') return `a link returned by POST /api/v1/files/upload to an ${orList(rules.formats)} ${noun}`;
  const extra = rules.linkFormats?.length ? ` (public links may also be ${orList(rules.linkFormats)})` : '';
  const asset = rules.assets ? ', or an asset:// id' : '';
  return `a public https link or an upload link to a ${orList(rules.formats)} ${noun}${extra}${asset}`;
}

/** The kind and format a link's file name suggests, if it has a known extension. */
export function formatByName(pathname: string): readonly [MediaKind, string] | undefined {
  const name = pathname.slice(pathname.lastIndexOf('/') + 1);
  const dot = name.lastIndexOf('.');
  if (dot < 0) return undefined;
  const ext = name.slice(dot + 1).toLowerCase();
  return Object.hasOwn(EXTENSIONS, ext) ? EXTENSIONS[ext] : undefined;
}

/** Checks one media link and returns it unchanged; refusals name the field, what is allowed and what was sent. */
export function checkLink(value: unknown, rules: LinkRules, where: Where, options: LinkOptions): string {
  const refuse = (why = '') => Errors.invalid(`${where.path} must be ${linkAllowed(rules)} for ${where.model}${why} (got ${shown(value)})`);
  if (typeof value !== 'string') throw refuse();
  if (value.length > MAX_LINK_LENGTH) throw refuse(`; links are at most ${MAX_LINK_LENGTH} characters`);
  if (value.startsWith('asset://')) {
    if (rules.assets && ASSET.test(value)) return value;
    throw refuse();
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw refuse();
  }
  if (url.username || url.password) throw refuse('; links may not carry a user name or password');
  const base = options.uploadBaseUrl;
  const isUpload = base !== undefined && value.startsWith(`${base}/files/`);
  if (rules.kind === 'image') {
    if (url.protocol !== 'https:' && !isUpload) throw refuse();
  } else if ((url.protocol !== 'https:' && url.protocol !== 'http:') || (base !== undefined && !isUpload)) {
    throw refuse();
  }
  const byName = formatByName(url.pathname);
  if (byName) {
    const [kind, format] = byName;
    const allowed = isUpload || rules.kind !== 'image' ? rules.formats : [...rules.formats, ...(rules.linkFormats ?? [])];
    if (kind !== rules.kind) throw refuse(`; this link names a ${format} ${NOUN[kind]}`);
    if (!allowed.includes(format)) throw refuse(`; ${format} is not accepted here`);
  }
  return value;
}
