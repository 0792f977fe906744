import { mkdir, readdir, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { LocalBackend } from '../../src/backends/index.js';
import { ASPECT_RATIOS } from '../../src/backends/local/dimensions.js';
import { renderImage, renderKey, renderTracks, renderVideo } from '../../src/backends/local/render.js';
import { probe, sniffFile } from '../../src/media/index.js';
import { hashOf, useTmpDir } from './helpers.js';

/** Renders with seed 1 twice and seed 2 once: the same seed must give the same bytes, another seed other bytes. */
async function expectSeedDecides(render: (seed: number, file: string) => Promise<unknown>, tmp: (name: string) => string) {
  const [a, b, c] = [tmp('seed-a'), tmp('seed-b'), tmp('seed-c')];
  await render(1, a);
  await render(1, b);
  await render(2, c);
  expect(await hashOf(a)).toBe(await hashOf(b));
  expect(await hashOf(a)).not.toBe(await hashOf(c));
}

describe('renderImage', () => {
  const tmp = useTmpDir();

  it.each(ASPECT_RATIOS)('1K %s: the file has the table size', async (aspectRatio) => {
    const out = await renderImage({ aspectRatio, sizeClass: '1K', format: 'png', seed: 1 }, tmp('a.png'));
    const meta = await sharp(tmp('a.png')).metadata();
    expect([meta.width, meta.height]).toEqual([out.width, out.height]);
    expect(Math.max(meta.width, meta.height)).toBe(1024);
    const [w, h] = aspectRatio.split(':').map(Number) as [number, number];
    expect(Math.abs(meta.width / meta.height / (w / h) - 1)).toBeLessThan(0.01);
  });

  it.each([
    ['1K', 1024, 576],
    ['2K', 2048, 1152],
    ['4K', 4096, 2304],
  ])('size class %s at 16:9 is %ix%i', async (sizeClass, width, height) => {
    await renderImage({ aspectRatio: '16:9', sizeClass, format: 'jpeg', seed: 2 }, tmp('a.jpg'));
    expect(await sharp(tmp('a.jpg')).metadata()).toMatchObject({ width, height, format: 'jpeg' });
  });

  it('writes PNG and JPEG that sniff as what they claim', async () => {
    const png = await renderImage({ sizeClass: '512x256', format: 'png' }, tmp('a.png'));
    const jpg = await renderImage({ sizeClass: '512x256', format: 'jpeg' }, tmp('a.jpg'));
    expect([png.mime, (await sniffFile(png.path))?.mime]).toEqual(['image/png', 'image/png']);
    expect([jpg.mime, (await sniffFile(jpg.path))?.mime]).toEqual(['image/jpeg', 'image/jpeg']);
    expect(png.bytes).toBeGreaterThan(0);
  });

  it('is deterministic for a seed, and different seeds differ', async () => {
    const params = { aspectRatio: '4:3', sizeClass: '256x192', format: 'png' as const, prompt: 'a cat' };
    await expectSeedDecides((seed, file) => renderImage({ ...params, seed }, file), tmp);
  });

  it('without a seed (or with -1) the prompt picks it, so a request re-renders identically', async () => {
    await renderImage({ sizeClass: '128x128', format: 'png', prompt: 'same' }, tmp('a.png'));
    await renderImage({ sizeClass: '128x128', format: 'png', prompt: 'same', seed: -1 }, tmp('b.png'));
    expect(await hashOf(tmp('a.png'))).toBe(await hashOf(tmp('b.png')));
  });

  it('draws the prompt into the picture, and survives hostile text', async () => {
    const base = { sizeClass: '640x360', format: 'png' as const, seed: 3 };
    await renderImage(base, tmp('plain.png'));
    await renderImage({ ...base, prompt: 'a lighthouse at dusk' }, tmp('text.png'));
    const [plain, text] = await Promise.all(
      ['plain.png', 'text.png'].map((f) => sharp(tmp(f)).extract({ left: 0, top: 300, width: 640, height: 60 }).raw().toBuffer()),
    );
    expect(plain!.equals(text!)).toBe(false);
    const hostile = '</text><script>alert(1)</script> & "quotes" \u0000\u0007\ud800 emoji 🎬 ' + 'long '.repeat(200);
    const out = await renderImage({ ...base, prompt: hostile }, tmp('hostile.png'));
    expect((await sharp(out.path).metadata()).width).toBe(640);
  });

  it('leaves no temporary file behind', async () => {
    await renderImage({ sizeClass: '64x64', format: 'png' }, tmp('only.png'));
    expect(await readdir(path.dirname(tmp('only.png')))).toEqual(['only.png']);
  });

  it('refuses unknown aspect ratios and sizes with the allowed values', async () => {
    await expect(renderImage({ aspectRatio: '2:1', format: 'png' }, tmp('x.png'))).rejects.toThrow(/16:9/);
    await expect(renderImage({ sizeClass: '9K9', format: 'png' }, tmp('x.png'))).rejects.toThrow(/1K, 2K, 4K/);
  });
});

describe('renderVideo', () => {
  const tmp = useTmpDir();

  it.each([
    ['480p', '16:9', 854, 480],
    ['720p', '16:9', 1280, 720],
    ['720p', '9:16', 720, 1280],
    ['720p', '1:1', 720, 720],
    ['1080p', '21:9', 2520, 1080],
  ])('%s %s is %ix%i H.264 yuv420p with AAC audio', async (resolution, aspectRatio, width, height) => {
    const out = await renderVideo({ resolution, aspectRatio, seconds: 1, withAudio: true, seed: 1 }, tmp('v.mp4'));
    const info = await probe(tmp('v.mp4'));
    expect(info).toMatchObject({ kind: 'video', width, height, videoCodec: 'h264', pixelFormat: 'yuv420p', hasAudio: true, audioCodec: 'aac' });
    expect(out).toMatchObject({ width, height, mime: 'video/mp4', hasAudio: true });
    expect((await sniffFile(tmp('v.mp4')))?.format).toBe('mp4');
  });

  it('lasts the requested seconds (5 s at 720p, the common case)', async () => {
    const out = await renderVideo({ resolution: '720p', aspectRatio: '16:9', seconds: 5, withAudio: true }, tmp('v.mp4'));
    expect(Math.abs(out.durationSeconds! - 5)).toBeLessThan(0.05);
  });

  it('has no audio track when none is asked for, and fractional lengths work', async () => {
    const info = await probe((await renderVideo({ resolution: '480p', seconds: 2.5, withAudio: false }, tmp('v.mp4'))).path);
    expect(info.hasAudio).toBe(false);
    expect(Math.abs(info.durationSeconds - 2.5)).toBeLessThan(0.05);
  });

  it('writes MOV when asked', async () => {
    const out = await renderVideo({ resolution: '480p', seconds: 1, withAudio: true, container: 'mov' }, tmp('v.mov'));
    expect(out.mime).toBe('video/quicktime');
    expect((await sniffFile(out.path))?.format).toBe('mov');
  });

  it('differs by seed and repeats for the same seed', async () => {
    const params = { resolution: '480p', aspectRatio: '1:1', seconds: 1, withAudio: false };
    await expectSeedDecides((seed, file) => renderVideo({ ...params, seed }, file), tmp);
  });

  it('refuses bad lengths and resolutions', async () => {
    await expect(renderVideo({ resolution: '720p', seconds: 0, withAudio: false }, tmp('v.mp4'))).rejects.toThrow(RangeError);
    await expect(renderVideo({ resolution: '2160p', seconds: 1, withAudio: false }, tmp('v.mp4'))).rejects.toThrow(/480p/);
  });
});

describe('renderTracks', () => {
  const tmp = useTmpDir();

  it('makes two valid, different MP3s of the requested length', async () => {
    const [a, b] = await renderTracks({ seconds: 3, seed: 5 }, [tmp('1.mp3'), tmp('2.mp3')]);
    for (const track of [a, b]) {
      expect((await sniffFile(track.path))?.format).toBe('mp3');
      const info = await probe(track.path);
      expect(info).toMatchObject({ kind: 'audio', format: 'mp3', audioCodec: 'mp3', hasVideo: false });
      expect(Math.abs(info.durationSeconds - 3)).toBeLessThan(0.1);
      expect(track.mime).toBe('audio/mpeg');
    }
    expect(await hashOf(a.path)).not.toBe(await hashOf(b.path));
  });

  it('repeats for the same seed, and different seeds differ', async () => {
    await expectSeedDecides((seed, file) => renderTracks({ seconds: 1, seed }, [file, `${file}.second.mp3`]), tmp);
  });

  it('renders whatever the prompt: the prompts whose tremolo rate once crashed ffmpeg 4.x', async () => {
    // "a song about the sea" (the README's example) drew 4.99 Hz, where ffmpeg's tremolo filter aborts.
    for (const [i, prompt] of ['a song about the sea', 'lullaby', 'x', 'rock anthem'].entries()) {
      const [a, b] = await renderTracks({ seconds: 2, prompt }, [tmp(`p${i}-1.mp3`), tmp(`p${i}-2.mp3`)]);
      expect((await probe(a.path)).kind).toBe('audio');
      expect((await probe(b.path)).kind).toBe('audio');
    }
  });
});

describe('renderKey', () => {
  it('ignores key order and tells parameters apart', () => {
    expect(renderKey('video', { a: 1, b: { c: 2, d: 3 } })).toBe(renderKey('video', { b: { d: 3, c: 2 }, a: 1 }));
    expect(renderKey('video', { a: 1 })).not.toBe(renderKey('video', { a: 2 }));
    expect(renderKey('video', { a: 1 })).not.toBe(renderKey('image', { a: 1 }));
    expect(renderKey('image', {})).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe('render-cache leftovers', () => {
  const tmp = useTmpDir();

  it('the first use of the cache removes partial files of killed renders; renders still running elsewhere and cached files stay', async () => {
    const cache = tmp('render-cache');
    await mkdir(cache);
    const hourAgo = new Date(Date.now() - 60 * 60_000);
    const files = {
      killed: `.${renderKey('video', { a: 1 })}.mp4.0123456789ab.part`,
      oldGarbage: 'garbage-0123456789ab.png',
      running: `.${renderKey('video', { a: 2 })}.mp4.ba9876543210.part`,
      cached: `${renderKey('video', { a: 3 })}.mp4`,
      other: 'notes.part',
    };
    for (const [what, name] of Object.entries(files)) {
      await writeFile(path.join(cache, name), 'x');
      if (what !== 'running') await utimes(path.join(cache, name), hourAgo, hourAgo);
    }
    const local = new LocalBackend({ now: () => Date.now() }, { queueMs: 0, generateMs: 0, fail: 'none', cacheDir: cache });
    const out = await local.results({ taskId: 't', model: 'nano-banana-2', kind: 'image', input: { prompt: 'a cat', seed: 1 }, media: {} });
    const left = await readdir(cache);
    expect(left).toContain(path.basename(out.files[0]!.path));
    expect(left).not.toContain(files.killed);
    expect(left).not.toContain(files.oldGarbage);
    expect(left).toEqual(expect.arrayContaining([files.running, files.cached, files.other]));
    expect(left).toHaveLength(4);
  });
});
