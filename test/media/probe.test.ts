import { copyFile, readFile, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { MediaError, checkIntact, probe, probeWhole, resolveBinary, runFfmpeg, runTool, setBinary, wholeSeconds } from '../../src/media/index.js';
import { ffmpeg, makeClip, makeStill, makeTone, useTmpDir } from './helpers.js';
import { eventually } from '../tasks/support.js';

describe('probe', () => {
  const tmp = useTmpDir();

  it('reads a video with sound', async () => {
    const file = await makeClip(tmp('a.mp4'), { seconds: 2, size: '160x120' });
    expect(await probe(file)).toMatchObject({
      kind: 'video',
      hasVideo: true,
      hasAudio: true,
      width: 160,
      height: 120,
      videoCodec: 'h264',
      audioCodec: 'aac',
      pixelFormat: 'yuv420p',
      frameRate: 24,
      rotation: 0,
    });
    expect((await probe(file)).durationSeconds).toBeCloseTo(2, 1);
  });

  it('reads a silent MOV', async () => {
    const info = await probe(await makeClip(tmp('a.mov'), { seconds: 1, audio: false }));
    expect(info).toMatchObject({ kind: 'video', hasVideo: true, hasAudio: false });
    expect(info.audioCodec).toBeUndefined();
  });

  it.each(['a.png', 'a.jpg', 'a.webp'])('reads still image %s: kind image, no duration', async (name) => {
    const info = await probe(await makeStill(tmp(name), '64x48'));
    expect(info).toMatchObject({ kind: 'image', width: 64, height: 48, durationSeconds: 0, hasVideo: false, hasAudio: false });
  });

  it.each([
    ['a.mp3', 'mp3', 'mp3'],
    ['a.wav', 'wav', 'pcm_s16le'],
  ])('reads audio %s', async (name, format, codec) => {
    const info = await probe(await makeTone(tmp(name), 3));
    expect(info).toMatchObject({ kind: 'audio', format, audioCodec: codec, hasAudio: true, hasVideo: false });
    expect(info.durationSeconds).toBeGreaterThan(2.9);
    expect(info.durationSeconds).toBeLessThan(3.1);
    expect(info.width).toBeUndefined();
  });

  it('treats MP3 cover art as a picture, not as video', async () => {
    const mp3 = await makeTone(tmp('a.mp3'), 1);
    const cover = await makeStill(tmp('cover.png'));
    const tagged = await ffmpeg(
      '-i',
      `file:${mp3}`,
      '-i',
      `file:${cover}`,
      '-map',
      '0',
      '-map',
      '1',
      '-c',
      'copy',
      '-id3v2_version',
      '3',
      '-disposition:v',
      'attached_pic',
      tmp('cover.mp3'),
    );
    expect(await probe(tagged)).toMatchObject({ kind: 'audio', hasVideo: false, hasAudio: true });
  });

  it('reports the displayed size of a rotated phone video', async () => {
    const plain = await makeClip(tmp('a.mp4'), { seconds: 1, size: '160x96', audio: false });
    const rotated = await ffmpeg('-i', `file:${plain}`, '-c', 'copy', '-metadata:s:v:0', 'rotate=90', tmp('rot.mp4'));
    const info = await probe(rotated);
    expect(Math.abs(info.rotation)).toBe(90);
    expect([info.width, info.height]).toEqual([96, 160]);
  });

  it('reads a file whose name looks like an option or a protocol', async () => {
    const clip = await makeClip(tmp('a.mp4'), { seconds: 1, audio: false });
    for (const odd of ['-i x.mp4', 'http:evil.mp4', 'concat:a|b.mp4']) {
      await copyFile(clip, tmp(odd));
      expect((await probe(tmp(odd))).kind).toBe('video');
    }
  });

  const unreadable: Array<[string, (file: string) => Promise<void>]> = [
    ['a zero-byte file', (f) => writeFile(f, '')],
    ['a text file', (f) => writeFile(f, 'not media at all\n'.repeat(50))],
    [
      'a truncated MP4 (first 2 KB, no index)',
      async (f) => {
        const clip = await makeClip(tmp('whole.mp4'), { seconds: 2, size: '320x240' });
        await writeFile(f, (await readFile(clip)).subarray(0, 2048));
      },
    ],
  ];
  it.each(unreadable)('throws MediaError(unreadable) for %s', async (_name, make) => {
    await make(tmp('bad.mp4'));
    const error = await probe(tmp('bad.mp4')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MediaError);
    expect(error).toMatchObject({ reason: 'unreadable' });
    expect((error as Error).message).toContain('bad.mp4');
  });

  it('throws for a file that does not exist', async () => {
    await expect(probe(tmp('missing.mp4'))).rejects.toMatchObject({ name: 'MediaError' });
  });
});

describe('checkIntact', () => {
  const tmp = useTmpDir();

  it('passes whole files and refuses truncated ones, reading packets only (what ffmpeg -xerror -c copy found)', async () => {
    const clip = await makeClip(tmp('whole.mp4'), {
      seconds: 2,
      videoCodec: ['-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-movflags', '+faststart'],
    });
    const wav = await makeTone(tmp('whole.wav'), 2);
    const mp3 = await makeTone(tmp('whole.mp3'), 2);
    for (const file of [clip, wav, mp3]) await expect(checkIntact(file)).resolves.toBeUndefined();
    for (const [file, name] of [
      [clip, 'cut.mp4'],
      [wav, 'cut.wav'],
    ] as const) {
      const bytes = await readFile(file);
      await writeFile(tmp(name), bytes.subarray(0, Math.floor(bytes.length * 0.6)));
      await expect(checkIntact(tmp(name))).rejects.toMatchObject({ name: 'MediaError', reason: 'unreadable' });
    }
  });
});

describe('probeWhole', () => {
  const tmp = useTmpDir();

  it("gives probe's facts and checkIntact's verdict from one ffprobe run", async () => {
    const fast = ['-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-movflags', '+faststart'];
    const whole = [
      await makeClip(tmp('plain.mp4'), { seconds: 2 }),
      await makeClip(tmp('fast.mp4'), { seconds: 2, videoCodec: fast }),
      await makeClip(tmp('a.mov'), { seconds: 1, audio: false }),
      await makeTone(tmp('a.wav'), 2),
      await makeTone(tmp('a.mp3'), 2),
    ];
    const damaged: string[] = [];
    for (const file of [whole[1]!, whole[3]!]) {
      const bytes = await readFile(file);
      const cut = file.replace(/(\.\w+)$/, '-cut$1');
      const hole = file.replace(/(\.\w+)$/, '-hole$1');
      await writeFile(cut, bytes.subarray(0, Math.floor(bytes.length * 0.6)));
      await writeFile(hole, Buffer.concat([bytes.subarray(0, Math.floor(bytes.length * 0.4)), bytes.subarray(Math.floor(bytes.length * 0.5))]));
      damaged.push(cut, hole);
    }
    for (const file of [...whole, ...damaged]) {
      const { info, damage } = await probeWhole(file);
      expect(info, file).toEqual(await probe(file));
      const intact = await checkIntact(file).then(
        () => true,
        () => false,
      );
      expect(damage === null, file).toBe(intact);
      expect(intact, file).toBe(whole.includes(file));
    }
  });

  it('throws MediaError(unreadable) when ffprobe cannot read the file at all', async () => {
    const bytes = await readFile(await makeClip(tmp('whole.mp4'), { seconds: 2 }));
    await writeFile(tmp('cut.mp4'), bytes.subarray(0, Math.floor(bytes.length * 0.6))); // the index (at the end) is gone
    await expect(probeWhole(tmp('cut.mp4'))).rejects.toMatchObject({ name: 'MediaError', reason: 'unreadable' });
  });
});

describe('runTool', () => {
  const tmp = useTmpDir();

  it('finds both binaries (ffmpeg: system first; ffprobe: the npm build first, it starts fastest)', () => {
    for (const tool of ['ffmpeg', 'ffprobe'] as const) {
      const found = resolveBinary(tool);
      expect(['system', 'npm']).toContain(found.source);
      expect(existsSync(found.path)).toBe(true);
    }
    // The npm packages are dependencies, so on the platforms they ship for ffprobe comes from them.
    expect(resolveBinary('ffprobe').source).toBe('npm');
  });

  it('kills a process that runs past its timeout', async () => {
    // An endless input: only the kill ends it.
    const error = await runFfmpeg(['-re', '-f', 'lavfi', '-i', 'testsrc=s=32x32', '-f', 'null', '-'], 'endless', { timeoutMs: 300 }).catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'MediaError', reason: 'timeout', op: 'endless' });
  });

  it('stops when aborted', async () => {
    const controller = new AbortController();
    const progress = tmp('progress.txt');
    const running = runFfmpeg(['-progress', `file:${progress}`, '-re', '-f', 'lavfi', '-i', 'testsrc=s=32x32', '-f', 'null', '-'], 'aborted op', {
      signal: controller.signal,
    });
    running.catch(() => {}); // awaited below
    // Aborted while it runs (it reports progress), not before it starts.
    await eventually(async () => (await readFile(progress, 'utf8')).includes('frame='), 15_000, 'ffmpeg to report progress');
    controller.abort();
    await expect(running).rejects.toMatchObject({ reason: 'aborted', message: expect.stringMatching(/ffmpeg was aborted/) });
  });

  it('says what failed, with the last stderr line', async () => {
    const error = (await runFfmpeg(['-i', `file:${tmp('nope.mp4')}`, '-f', 'null', '-'], 'convert nope').catch((e: unknown) => e)) as MediaError;
    expect(error.reason).toBe('failed');
    expect(error.message).toMatch(/^convert nope: ffmpeg exited with code 1: .*No such file/);
  });

  it('keeps only a bounded tail of stderr', async () => {
    const { stderr } = await runTool('ffmpeg', ['-v', 'debug', '-f', 'lavfi', '-i', 'testsrc=s=32x32:d=2', '-f', 'null', '-'], 'chatty');
    expect(stderr.length).toBeGreaterThan(1000);
    expect(stderr.length).toBeLessThanOrEqual(8 * 1024);
  });

  it('reports a missing binary as missing_binary', async () => {
    setBinary('ffprobe', tmp('no-such-ffprobe'));
    try {
      await expect(probe(tmp('x.mp4'))).rejects.toMatchObject({ reason: 'missing_binary' });
    } finally {
      setBinary('ffprobe', null);
    }
  });
});

describe('wholeSeconds (DECISIONS §5: half up, at least 1)', () => {
  it.each([
    [0, 1],
    [0.2, 1],
    [1, 1],
    [1.49, 1],
    [1.5, 2],
    [2.5, 3],
    [4.999, 5],
    [5.02, 5],
    [30.0408, 30],
    [29.5, 30],
  ])('%f -> %i', (duration, seconds) => {
    expect(wholeSeconds(duration)).toBe(seconds);
  });

  it.each([-1, Number.NaN, Number.POSITIVE_INFINITY])('refuses %f', (duration) => {
    expect(() => wholeSeconds(duration)).toThrow(RangeError);
  });
});
