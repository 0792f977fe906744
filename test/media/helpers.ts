import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach } from 'vitest';
import { fileArg, runFfmpeg } from '../../src/media/index.js';

/** A fresh temporary folder per test, removed afterwards; call at the top of a describe block. */
export function useTmpDir(): (name: string) => string {
  let dir = '';
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'gengate-media-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  return (name: string) => path.join(dir, name);
}

/** Runs ffmpeg with the given inputs/outputs; the last argument is the output file. */
export async function ffmpeg(...args: string[]): Promise<string> {
  const out = args.at(-1)!;
  await runFfmpeg([...args.slice(0, -1), fileArg(out)], `test ffmpeg -> ${out}`);
  return out;
}

export interface ClipOptions {
  seconds?: number;
  size?: string;
  audio?: boolean;
  /** Extra video encoder arguments; default H.264 yuv420p. */
  videoCodec?: string[];
  /** Extra filters after the test pattern. */
  filter?: string;
  rate?: number;
}

/** A small test-pattern clip (MP4 or MOV by the file's extension) with an optional sine track. */
export function makeClip(file: string, o: ClipOptions = {}): Promise<string> {
  const seconds = String(o.seconds ?? 2);
  const video = `testsrc2=s=${o.size ?? '160x120'}:r=${o.rate ?? 24}:d=${seconds}${o.filter ? `,${o.filter}` : ''}`;
  const audio = o.audio === false ? [] : ['-f', 'lavfi', '-i', `sine=f=440:d=${seconds}`, '-c:a', 'aac'];
  const codec = o.videoCodec ?? ['-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p'];
  return ffmpeg('-f', 'lavfi', '-i', video, ...audio, ...codec, file);
}

/** A sine tone as MP3 or WAV (by extension); extra output args e.g. to drop the ID3 tag. */
export function makeTone(file: string, seconds = 2, ...extra: string[]): Promise<string> {
  return ffmpeg('-f', 'lavfi', '-i', `sine=f=330:d=${seconds}`, ...extra, file);
}

/** A still image (PNG, JPG or WebP by extension) of a test pattern. */
export function makeStill(file: string, size = '64x48'): Promise<string> {
  return ffmpeg('-f', 'lavfi', '-i', `testsrc=s=${size}:d=1`, '-frames:v', '1', file);
}

/** SHA-256 of a file, to tell contents apart. */
export async function hashOf(file: string): Promise<string> {
  return createHash('sha256')
    .update(await readFile(file))
    .digest('hex');
}

/** The first `n` bytes of a file. */
export async function head(file: string, n = 4096): Promise<Buffer> {
  return (await readFile(file)).subarray(0, n);
}
