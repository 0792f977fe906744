import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { ffmpeg, makeClip } from '../media/helpers.js';
import { upload } from './support.js';

/**
 * Issue 17 item 2: a video is refused by its probed size, frame rate and frame count before
 * anything decodes or converts it (a 2 MB 8192×8192 MOV took 2.75 GB to convert).
 */

let media = '';
/** One frame of a solid colour at 8192×8192: a few hundred KB, tiny to upload, huge to decode. */
let hugeMov = '';
let hugeMp4 = '';
beforeAll(async () => {
  media = await mkdtemp(path.join(tmpdir(), 'gengate-video-limits-'));
  const frame = ['-f', 'lavfi', '-i', 'color=c=red:s=8192x8192:r=1:d=1', '-frames:v', '1', '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p'];
  hugeMov = await ffmpeg(...frame, path.join(media, 'huge.mov'));
  hugeMp4 = await ffmpeg('-i', `file:${hugeMov}`, '-c', 'copy', path.join(media, 'huge.mp4'));
});
afterAll(() => rm(media, { recursive: true, force: true }));

for (const dialect of dialects()) {
  describe(`video limits at upload (${dialect})`, () => {
    let s: TestServer;
    let small: TestServer;
    let key: string;
    let smallKey: string;
    beforeAll(async () => {
      s = await startServer(dialect, { RUN_ENGINE: 'false' });
      key = (await s.account(1)).key;
      small = await startServer(dialect, {
        RUN_ENGINE: 'false',
        UPLOAD_MAX_VIDEO_FRAMES: '40',
        UPLOAD_MAX_VIDEO_SIDE: '320',
        UPLOAD_MAX_VIDEO_PIXELS: '50000',
      });
      smallKey = (await small.account(1)).key;
    });
    afterAll(async () => {
      await s.close();
      await small.close();
    });

    const refused = (r: { status: number; body: any }, msg: RegExp) => {
      expect(r.status, JSON.stringify(r.body)).toBe(422);
      expect(r.body).toMatchObject({ code: 422, error: 'validation_error', data: null });
      expect(r.body.msg).toMatch(msg);
      expect(r.body.msg).not.toMatch(/\/tmp|\/upload-|ffmpeg|ffprobe/);
    };

    /** Nothing of a refused upload stays: no files row, no temporary file. */
    async function nothingKept(server: TestServer): Promise<void> {
      const rows = await server.services.database.db.selectFrom('files').select('id').execute();
      expect(rows).toHaveLength(0);
      const left = await readdir(path.join(server.config.DATA_DIR, 'tmp')).catch(() => []);
      expect(left).toEqual([]);
    }

    it('refuses an 8192×8192 MOV before converting it, and an 8192×8192 MP4 before storing it', async () => {
      refused(await upload(s, key, hugeMov, 'huge.mov'), /at most 4096 pixels per side and 8847360 pixels per frame \(got 8192×8192 = 67108864 pixels\)/);
      refused(await upload(s, key, hugeMp4, 'huge.mp4'), /got 8192×8192/);
      await nothingKept(s);
    });

    it('refuses a video over the frame rate', async () => {
      const fast = await makeClip(path.join(media, `fast-${dialect}.mp4`), { seconds: 1, size: '64x48', rate: 240, audio: false });
      refused(await upload(s, key, fast, 'fast.mp4'), /at most 120 frames per second \(got 240\)/);
      await nothingKept(s);
    });

    it('follows the configured limits: frames, side and pixels', async () => {
      const clip = await makeClip(path.join(media, `frames-${dialect}.mp4`), { seconds: 2, size: '160x120', rate: 24 });
      refused(await upload(small, smallKey, clip, 'frames.mp4'), /at most 40 frames \(got 48\)/);
      const wide = await makeClip(path.join(media, `wide-${dialect}.mov`), { seconds: 1, size: '480x64', rate: 24 });
      refused(await upload(small, smallKey, wide, 'wide.mov'), /at most 320 pixels per side .*got 480×64/);
      const square = await makeClip(path.join(media, `square-${dialect}.mp4`), { seconds: 1, size: '240x240', rate: 24 });
      refused(await upload(small, smallKey, square, 'square.mp4'), /50000 pixels per frame \(got 240×240 = 57600 pixels\)/);
      await nothingKept(small);
      const within = await makeClip(path.join(media, `within-${dialect}.mov`), { seconds: 1, size: '160x120', rate: 24 });
      const r = await upload(small, smallKey, within, 'within.mov');
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body.data).toMatchObject({ kind: 'video', fileName: 'within.mp4', seconds: 1 });
    });
  });
}
