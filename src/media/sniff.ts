import { open } from 'node:fs/promises';
import type { MediaKind } from './probe.js';

export type SniffedFormat = 'jpg' | 'png' | 'webp' | 'mp4' | 'mov' | 'mp3' | 'wav';

/** A file type recognised from its first bytes. */
export interface Sniffed {
  format: SniffedFormat;
  kind: MediaKind;
  mime: string;
  /** File extension to store it under, without the dot. */
  ext: string;
}

/** How many leading bytes sniff wants to see; fewer still works but checks less (e.g. the second MP3 frame). */
export const SNIFF_BYTES = 4096;

const TYPES: Record<SniffedFormat, Sniffed> = {
  jpg: { format: 'jpg', kind: 'image', mime: 'image/jpeg', ext: 'jpg' },
  png: { format: 'png', kind: 'image', mime: 'image/png', ext: 'png' },
  webp: { format: 'webp', kind: 'image', mime: 'image/webp', ext: 'webp' },
  mp4: { format: 'mp4', kind: 'video', mime: 'video/mp4', ext: 'mp4' },
  mov: { format: 'mov', kind: 'video', mime: 'video/quicktime', ext: 'mov' },
  mp3: { format: 'mp3', kind: 'audio', mime: 'audio/mpeg', ext: 'mp3' },
  wav: { format: 'wav', kind: 'audio', mime: 'audio/wav', ext: 'wav' },
};

/**
 * Major brands of video MP4s. Deliberately not everything with an `ftyp` box: HEIC/AVIF images
 * (`heic`, `mif1`, `avif`) and audio-only M4A (`M4A `) share the container but are not videos.
 */
const MP4_BRANDS = new Set([
  'isom',
  'iso2',
  'iso3',
  'iso4',
  'iso5',
  'iso6',
  'iso8',
  'iso9',
  'mp41',
  'mp42',
  'mp71',
  'avc1',
  'M4V ',
  'M4VH',
  'M4VP',
  'dash',
  'msnv',
  'MSNV',
  'mmp4',
]);
/** Top-level atoms that open a QuickTime file written without an `ftyp` box (older cameras and editors). */
const LEGACY_MOV_ATOMS = new Set(['moov', 'wide', 'mdat', 'pnot']);

function ascii(bytes: Buffer, from: number, to: number): string {
  return bytes.length >= to ? bytes.toString('latin1', from, to) : '';
}

function startsWith(bytes: Buffer, signature: readonly number[]): boolean {
  return bytes.length >= signature.length && signature.every((b, i) => bytes[i] === b);
}

// MPEG audio layer III tables, indexed by the header's bit fields.
const BITRATES_V1 = [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320];
const BITRATES_V2 = [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160];
const SAMPLE_RATES: Record<number, readonly number[]> = {
  3: [44100, 48000, 32000], // MPEG-1
  2: [22050, 24000, 16000], // MPEG-2
  0: [11025, 12000, 8000], // MPEG-2.5
};

interface FrameHeader {
  version: number;
  sampleRate: number;
  length: number;
}

/** Reads an MPEG-1/2/2.5 layer III frame header at `at`; null when the 4 bytes are not one. */
function mp3Frame(bytes: Buffer, at: number): FrameHeader | null {
  if (at + 4 > bytes.length) return null;
  const b1 = bytes[at + 1]!;
  const b2 = bytes[at + 2]!;
  if (bytes[at] !== 0xff || (b1 & 0xe0) !== 0xe0) return null;
  const version = (b1 >> 3) & 3;
  const layer = (b1 >> 1) & 3;
  const bitrateIndex = b2 >> 4;
  const rates = SAMPLE_RATES[version];
  const sampleRate = rates?.[(b2 >> 2) & 3];
  // Layer III only; free-format (0) and bad (15) bitrates and the reserved emphasis are not accepted.
  if (layer !== 1 || !sampleRate || bitrateIndex === 0 || bitrateIndex === 15 || (bytes[at + 3]! & 3) === 2) return null;
  const kbps = (version === 3 ? BITRATES_V1 : BITRATES_V2)[bitrateIndex]!;
  const padding = (b2 >> 1) & 1;
  const length = Math.floor(((version === 3 ? 144 : 72) * kbps * 1000) / sampleRate) + padding;
  return { version, sampleRate, length };
}

/** A frame at `at` whose successor, when it lies within the bytes we have, is a matching frame. */
function confirmedFrame(bytes: Buffer, at: number): boolean {
  const first = mp3Frame(bytes, at);
  if (!first) return false;
  const nextAt = at + first.length;
  if (nextAt + 4 > bytes.length) return true;
  const next = mp3Frame(bytes, nextAt);
  return next !== null && next.version === first.version && next.sampleRate === first.sampleRate;
}

function isMp3(bytes: Buffer): boolean {
  if (ascii(bytes, 0, 3) !== 'ID3') return confirmedFrame(bytes, 0);
  if (bytes.length < 10) return false;
  const [major, revision, flags] = [bytes[3]!, bytes[4]!, bytes[5]!];
  const size = bytes.subarray(6, 10);
  if (major < 2 || major > 4 || revision === 0xff || size.some((b) => b >= 0x80)) return false;
  // ID3v2 sizes are "syncsafe": 7 bits per byte. A v2.4 footer adds 10 bytes.
  const tagEnd = 10 + ((size[0]! << 21) | (size[1]! << 14) | (size[2]! << 7) | size[3]!) + (flags & 0x10 ? 10 : 0);
  if (tagEnd + 4 > bytes.length) return true; // the audio starts beyond what we were shown; probe decides
  // Some taggers leave padding after the tag: look for the first confirmed frame in what we have.
  for (let at = tagEnd; at + 4 <= bytes.length; at++) {
    if (confirmedFrame(bytes, at)) return true;
  }
  return false;
}

function isoMedia(bytes: Buffer): Sniffed | null {
  if (bytes.length < 12) return null;
  const boxSize = bytes.readUInt32BE(0);
  const box = ascii(bytes, 4, 8);
  // Size 1 means a 64-bit size follows; otherwise a box is at least its own 8-byte header.
  if (boxSize !== 1 && boxSize < 8) return null;
  if (box === 'ftyp') {
    const brand = ascii(bytes, 8, 12);
    if (brand === 'qt  ') return TYPES.mov;
    return MP4_BRANDS.has(brand) ? TYPES.mp4 : null;
  }
  return LEGACY_MOV_ATOMS.has(box) ? TYPES.mov : null;
}

function riff(bytes: Buffer): Sniffed | null {
  const container = ascii(bytes, 0, 4);
  const form = ascii(bytes, 8, 12);
  // RF64 and BW64 are the large-file variants of WAV.
  if (form === 'WAVE' && (container === 'RIFF' || container === 'RF64' || container === 'BW64')) return TYPES.wav;
  if (container !== 'RIFF' || form !== 'WEBP') return null;
  const chunk = ascii(bytes, 12, 16);
  return chunk === '' || chunk === 'VP8 ' || chunk === 'VP8L' || chunk === 'VP8X' ? TYPES.webp : null;
}

/** Decides an upload's type from its first bytes only (DECISIONS §10): JPG, PNG, WebP, MP4, MOV, MP3, WAV, else null. */
export function sniff(firstBytes: Buffer | Uint8Array): Sniffed | null {
  const bytes = Buffer.isBuffer(firstBytes) ? firstBytes : Buffer.from(firstBytes.buffer, firstBytes.byteOffset, firstBytes.byteLength);
  if (startsWith(bytes, [0xff, 0xd8, 0xff])) return TYPES.jpg;
  if (startsWith(bytes, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return TYPES.png;
  return riff(bytes) ?? isoMedia(bytes) ?? (isMp3(bytes) ? TYPES.mp3 : null);
}

/** The type record of a known format (for code that stores or serves a file of that format). */
export function typeOf(format: SniffedFormat): Sniffed {
  return TYPES[format];
}

/** Sniffs a file on disk by reading its first SNIFF_BYTES. */
export async function sniffFile(file: string): Promise<Sniffed | null> {
  const handle = await open(file, 'r');
  try {
    const head = Buffer.alloc(SNIFF_BYTES);
    const { bytesRead } = await handle.read(head, 0, SNIFF_BYTES, 0);
    return sniff(head.subarray(0, bytesRead));
  } finally {
    await handle.close();
  }
}
