import { writeFile } from 'node:fs/promises';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SNIFF_BYTES, sniff, sniffFile, type SniffedFormat } from '../../src/media/index.js';
import { head, makeClip, makeStill, makeTone, useTmpDir } from './helpers.js';

describe('sniff: every accepted format, made by ffmpeg', () => {
  const tmp = useTmpDir();

  const cases: Array<[string, SniffedFormat, (file: string) => Promise<string>]> = [
    ['a.jpg', 'jpg', (f) => makeStill(f)],
    ['a.png', 'png', (f) => makeStill(f)],
    ['a.webp', 'webp', (f) => makeStill(f)],
    ['a.mp4', 'mp4', (f) => makeClip(f, { seconds: 0.5 })],
    ['a.mov', 'mov', (f) => makeClip(f, { seconds: 0.5 })],
    ['id3.mp3', 'mp3', (f) => makeTone(f, 0.5)],
    ['bare.mp3', 'mp3', (f) => makeTone(f, 0.5, '-id3v2_version', '0', '-write_xing', '0')],
    ['a.wav', 'wav', (f) => makeTone(f, 0.5)],
    // "A WAV with an odd header": RF64 container, and 24-bit 6-channel (WAVE_FORMAT_EXTENSIBLE).
    ['rf64.wav', 'wav', (f) => makeTone(f, 0.5, '-rf64', 'always')],
    ['ext.wav', 'wav', (f) => makeTone(f, 0.5, '-ac', '6', '-c:a', 'pcm_s24le')],
  ];

  it.each(cases)('%s is %s, from its bytes and from the file', async (name, format, make) => {
    const file = await make(tmp(name));
    expect(sniff(await head(file, SNIFF_BYTES))?.format).toBe(format);
    expect((await sniffFile(file))?.format).toBe(format);
  });

  it('the bare MP3 really starts with a frame, not a tag', async () => {
    const file = await makeTone(tmp('bare.mp3'), 0.5, '-id3v2_version', '0', '-write_xing', '0');
    const bytes = await head(file, 4);
    expect(bytes.toString('latin1', 0, 3)).not.toBe('ID3');
    expect(bytes[0]).toBe(0xff);
  });

  it('ignores the name: a PNG called .mp4 is a PNG', async () => {
    const file = await makeStill(tmp('a.png'));
    const renamed = tmp('not-a-video.mp4');
    await writeFile(renamed, await head(file, 1 << 20));
    expect(await sniffFile(renamed)).toMatchObject({ format: 'png', kind: 'image', mime: 'image/png' });
  });

  it('refuses an audio-only MP4 (M4A brand)', async () => {
    const file = await makeTone(tmp('a.m4a'), 0.5, '-c:a', 'aac');
    expect(sniff(await head(file))).toBeNull();
  });

  it('refuses an MP3 whose ID3 tag is followed by something other than MP3 frames', async () => {
    const mp3 = await head(await makeTone(tmp('a.mp3'), 0.5));
    const tagEnd = 10 + ((mp3[6]! << 21) | (mp3[7]! << 14) | (mp3[8]! << 7) | mp3[9]!);
    const junk = Buffer.concat([mp3.subarray(0, tagEnd), Buffer.alloc(600, 0x41)]);
    expect(sniff(junk)).toBeNull();
  });
});

describe('sniff: junk, empty and truncated input', () => {
  const refused: Array<[string, Buffer]> = [
    ['zero bytes', Buffer.alloc(0)],
    ['zeros', Buffer.alloc(4096)],
    ['text', Buffer.from('hello, this is not a video\n')],
    ['JSON', Buffer.from('{"file":"x.mp4"}')],
    ['two bytes of a JPEG', Buffer.from([0xff, 0xd8])],
    ['seven bytes of the PNG signature', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a])],
    ['RIFF without a form type', Buffer.from('RIFF\x10\x00\x00\x00', 'latin1')],
    ['an AVI', Buffer.from('RIFF\x10\x00\x00\x00AVI LIST', 'latin1')],
    ['a GIF', Buffer.from('GIF89a\x01\x00\x01\x00', 'latin1')],
    ['a HEIC (ftyp heic)', Buffer.from('\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic', 'latin1')],
    ['an AVIF', Buffer.from('\x00\x00\x00\x1cftypavif\x00\x00\x00\x00avifmif1miaf', 'latin1')],
    ['ftyp with a box size under 8', Buffer.from('\x00\x00\x00\x04ftypisom', 'latin1')],
    ['MP4 cut inside the brand', Buffer.from('\x00\x00\x00\x20ftypis', 'latin1')],
    ['an ID3 header cut short', Buffer.from('ID3\x04\x00', 'latin1')],
    ['ID3 with a non-syncsafe size', Buffer.from('ID3\x04\x00\x00\x80\x00\x00\x00', 'latin1')],
    ['AAC ADTS frame sync (not layer III)', Buffer.from([0xff, 0xf1, 0x50, 0x80, 0x02, 0x1f, 0xfc])],
    ['MPEG frame with a bad bitrate', Buffer.from([0xff, 0xfb, 0xf0, 0x00])],
    ['a PDF', Buffer.from('%PDF-1.7\n', 'latin1')],
    ['an ELF binary', Buffer.from('\x7fELF\x02\x01\x01', 'latin1')],
  ];
  it.each(refused)('%s -> null', (_name, bytes) => {
    expect(sniff(bytes)).toBeNull();
  });

  it('accepts MP4 and MOV by brand, and a QuickTime file without ftyp', () => {
    expect(sniff(Buffer.from('\x00\x00\x00\x20ftypmp42\x00\x00\x00\x00', 'latin1'))?.format).toBe('mp4');
    expect(sniff(Buffer.from('\x00\x00\x00\x14ftypqt  \x00\x00\x00\x00', 'latin1'))?.format).toBe('mov');
    expect(sniff(Buffer.from('\x00\x00\x00\x08wide\x00\x00\x10\x00mdat', 'latin1'))?.format).toBe('mov');
  });

  it('never throws, and answers null or a known type, for any bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
        const result = sniff(Buffer.from(bytes));
        expect(result === null || ['jpg', 'png', 'webp', 'mp4', 'mov', 'mp3', 'wav'].includes(result.format)).toBe(true);
      }),
    );
  });

  it('accepts a Uint8Array as well as a Buffer', () => {
    expect(sniff(new Uint8Array([0xff, 0xd8, 0xff, 0xe0]))?.format).toBe('jpg');
  });
});
