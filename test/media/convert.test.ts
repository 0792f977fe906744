import sharp from 'sharp';
import { existsSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_VIDEO_LIMITS, MediaError, configureMedia, lastFrame, movToMp4, probe, sniffFile, trim, wholeSeconds } from '../../src/media/index.js';
import { hashOf, makeClip, makeStill, makeTone, useTmpDir } from './helpers.js';

describe('movToMp4', () => {
  const tmp = useTmpDir();

  it('remuxes an H.264 MOV into a real MP4 with the same picture, sound and length', async () => {
    const mov = await makeClip(tmp('in.mov'), { seconds: 2, size: '160x120' });
    expect((await sniffFile(mov))?.format).toBe('mov');
    const info = await movToMp4(mov, tmp('out.mp4'));
    expect((await sniffFile(tmp('out.mp4')))?.format).toBe('mp4');
    expect(info).toMatchObject({ kind: 'video', width: 160, height: 120, videoCodec: 'h264', hasAudio: true });
    expect(info.durationSeconds).toBeCloseTo((await probe(mov)).durationSeconds, 1);
  });

  it('re-encodes codecs an MP4 should not carry (ProRes, PCM) to H.264/AAC', async () => {
    const mov = await makeClip(tmp('prores.mov'), {
      seconds: 1,
      size: '161x121', // odd sizes must still come out as valid yuv420p
      videoCodec: ['-c:v', 'prores_ks', '-c:a', 'pcm_s16le'],
    });
    const info = await movToMp4(mov, tmp('out.mp4'));
    expect((await sniffFile(tmp('out.mp4')))?.format).toBe('mp4');
    expect(info).toMatchObject({ videoCodec: 'h264', audioCodec: 'aac', pixelFormat: 'yuv420p', width: 160, height: 120 });
  });

  it('scales a re-encoded video down to 1920 pixels on its long side, keeping the aspect (bounds the encoder memory)', async () => {
    const mov = await makeClip(tmp('wide.mov'), { seconds: 1, size: '2400x120', rate: 5, videoCodec: ['-c:v', 'mjpeg'] });
    const info = await movToMp4(mov, tmp('out.mp4'));
    expect(info).toMatchObject({ videoCodec: 'h264', width: 1920, height: 96 });
  });

  it('refuses audio and refuses to overwrite its own input', async () => {
    await expect(movToMp4(await makeTone(tmp('a.wav'), 1), tmp('out.mp4'))).rejects.toMatchObject({ reason: 'unreadable' });
    const mov = await makeClip(tmp('in.mov'), { seconds: 1, audio: false });
    await expect(movToMp4(mov, mov)).rejects.toBeInstanceOf(MediaError);
  });
});

describe('trim', () => {
  const tmp = useTmpDir();

  it('keeps the first N seconds of a video, exactly, with its sound', async () => {
    const clip = await makeClip(tmp('in.mp4'), { seconds: 5, size: '160x120' });
    const info = await trim(clip, tmp('out.mp4'), 3);
    expect(Math.abs(info.durationSeconds - 3)).toBeLessThan(0.05);
    expect(wholeSeconds(info.durationSeconds)).toBe(3);
    expect(info).toMatchObject({ kind: 'video', hasAudio: true, width: 160, height: 120, videoCodec: 'h264' });
    expect((await sniffFile(tmp('out.mp4')))?.format).toBe('mp4');
  });

  it('cuts between keyframes too (a stream copy would land on the keyframe)', async () => {
    const clip = await makeClip(tmp('in.mp4'), {
      seconds: 4,
      audio: false,
      videoCodec: ['-c:v', 'libx264', '-preset', 'ultrafast', '-g', '1000', '-pix_fmt', 'yuv420p'],
    });
    const info = await trim(clip, tmp('out.mp4'), 2.5);
    expect(Math.abs(info.durationSeconds - 2.5)).toBeLessThan(0.05);
  });

  it('leaves a clip no longer than N unchanged', async () => {
    const clip = await makeClip(tmp('in.mp4'), { seconds: 2 });
    await trim(clip, tmp('out.mp4'), 5);
    expect(await hashOf(tmp('out.mp4'))).toBe(await hashOf(clip));
  });

  it('writes a short MOV as MP4 even when no cut is needed', async () => {
    const mov = await makeClip(tmp('in.mov'), { seconds: 1 });
    await trim(mov, tmp('out.mp4'), 5);
    expect((await sniffFile(tmp('out.mp4')))?.format).toBe('mp4');
  });

  it.each(['mp3', 'wav'])('trims %s audio by stream copy', async (ext) => {
    const tone = await makeTone(tmp(`in.${ext}`), 5);
    const info = await trim(tone, tmp(`out.${ext}`), 2);
    expect(info).toMatchObject({ kind: 'audio', format: ext });
    expect(Math.abs(info.durationSeconds - 2)).toBeLessThan(0.06);
  });

  it('refuses images, bad lengths and mismatched outputs', async () => {
    const png = await makeStill(tmp('a.png'));
    await expect(trim(png, tmp('out.mp4'), 1)).rejects.toMatchObject({ reason: 'unreadable' });
    const clip = await makeClip(tmp('in.mp4'), { seconds: 1, audio: false });
    await expect(trim(clip, tmp('out.mp4'), 0)).rejects.toThrow(RangeError);
    await expect(trim(clip, tmp('out.mov'), 1)).rejects.toThrow(/written as \.mp4/);
  });
});

describe('video limits (issue 17 item 2)', () => {
  const tmp = useTmpDir();
  afterEach(() => configureMedia({ video: DEFAULT_VIDEO_LIMITS }));

  it('trim and movToMp4 refuse a video over the limits before ffmpeg decodes it', async () => {
    const clip = await makeClip(tmp('in.mp4'), { seconds: 2, size: '320x240' });
    const mov = await makeClip(tmp('in.mov'), { seconds: 2, size: '320x240' });
    configureMedia({ video: { ...DEFAULT_VIDEO_LIMITS, maxSide: 256 } });
    const cut = await trim(clip, tmp('cut.mp4'), 1).catch((e: unknown) => e);
    expect(cut).toBeInstanceOf(MediaError);
    expect(cut).toMatchObject({ reason: 'too_large', detail: expect.stringMatching(/at most 256 pixels per side .*got 320×240/) });
    expect(existsSync(tmp('cut.mp4'))).toBe(false);
    await expect(movToMp4(mov, tmp('out.mp4'))).rejects.toMatchObject({ reason: 'too_large' });
    expect(existsSync(tmp('out.mp4'))).toBe(false);
    configureMedia({ video: { ...DEFAULT_VIDEO_LIMITS, maxFrames: 30 } });
    await expect(trim(clip, tmp('cut.mp4'), 1)).rejects.toMatchObject({ reason: 'too_large', detail: expect.stringMatching(/at most 30 frames \(got 48\)/) });
    configureMedia({ video: DEFAULT_VIDEO_LIMITS });
    expect((await trim(clip, tmp('cut.mp4'), 1)).durationSeconds).toBeCloseTo(1, 1);
  });
});

describe('lastFrame', () => {
  const tmp = useTmpDir();

  /** RGB of the centre pixel. */
  async function centre(file: string): Promise<number[]> {
    const { data, info } = await sharp(file).raw().toBuffer({ resolveWithObject: true });
    const at = (Math.floor(info.height / 2) * info.width + Math.floor(info.width / 2)) * info.channels;
    return [data[at]!, data[at + 1]!, data[at + 2]!];
  }

  it('writes the very last frame as a PNG of the video size', async () => {
    // Red throughout, blue only in the final 0.1 s: only the true last frame is blue.
    const clip = await makeClip(tmp('in.mp4'), {
      seconds: 3,
      size: '320x180',
      audio: false,
      filter: "drawbox=c=red:t=fill,drawbox=c=blue:t=fill:enable='gte(t,2.9)'",
    });
    const info = await lastFrame(clip, tmp('last.png'));
    expect((await sniffFile(tmp('last.png')))?.format).toBe('png');
    expect(info).toMatchObject({ kind: 'image', width: 320, height: 180 });
    const [r, g, b] = await centre(tmp('last.png'));
    expect(b).toBeGreaterThan(200);
    expect(r).toBeLessThan(60);
    expect(g).toBeLessThan(60);
  });

  it('works for a clip shorter than its 0.3 s look-back', async () => {
    const clip = await makeClip(tmp('short.mp4'), { seconds: 0.12, size: '96x64', audio: false });
    expect(await lastFrame(clip, tmp('last.png'))).toMatchObject({ kind: 'image', width: 96, height: 64 });
  });

  it('refuses a file that is not a video', async () => {
    await expect(lastFrame(await makeTone(tmp('a.mp3'), 1), tmp('last.png'))).rejects.toBeInstanceOf(MediaError);
  });
});
