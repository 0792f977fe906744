import { writeFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_VIDEO_LIMITS, configureMedia, probe } from '../../src/media/index.js';
import { dialects } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { makeClip, makeTone, useTmpDir } from '../media/helpers.js';
import { FAST, fetchFile, info, settle } from '../tasks/support.js';
import { upload } from './support.js';

const MODEL = 'seedance-2.0-fast';

describe.each(dialects())('uploaded clips in createTask on %s', (dialect) => {
  let s: TestServer;
  const tmp = useTmpDir();
  const clips: Record<string, string> = {};
  beforeAll(async () => {
    s = await startServer(dialect, FAST);
    s.services.engine.start();
  });
  afterAll(() => s.close());

  /** Uploads a test clip of `seconds` once per account key and name. */
  async function clip(key: string, seconds: number, kind: 'video' | 'audio' = 'video'): Promise<string> {
    const name = `${kind}-${seconds}.${kind === 'video' ? 'mp4' : 'mp3'}`;
    const memo = `${key}/${name}`;
    if (clips[memo]) return clips[memo];
    const file = kind === 'video' ? await makeClip(tmp(name), { seconds, size: '96x64', rate: 12 }) : await makeTone(tmp(name), seconds);
    const r = await upload(s, key, file, name);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return (clips[memo] = r.body.data.url);
  }
  const create = (key: string, input: Record<string, unknown>) =>
    s.call('POST', '/api/v1/jobs/createTask', { key, body: { model: MODEL, input: { prompt: 'a walk', ...input } } });
  const balance = async (key: string) => (await s.call('GET', '/api/v1/user/balance', { key })).body.data.balance as string;

  /** The seconds of a file behind one of our links, probed. */
  async function secondsAt(link: string): Promise<number> {
    const file = tmp(`fetched-${Math.random().toString(36).slice(2)}`);
    await writeFile(file, Buffer.from(await (await fetchFile(s, link)).arrayBuffer()));
    return (await probe(file)).durationSeconds;
  }

  it('refuses another account’s upload and links that are not uploads', async () => {
    const a = await s.account(10);
    const b = await s.account(10);
    const theirs = await clip(b.key, 4);
    const r = await create(a.key, { video_urls: [theirs] });
    expect(r.status).toBe(400);
    expect(r.body.msg).toMatch(/input\.video_urls\[0\] must be a link returned by POST \/api\/v1\/files\/upload for this account/);
    const external = await create(a.key, { audio_urls: ['https://example.com/song.mp3'] });
    expect(external.status).toBe(400);
    expect(await balance(a.key)).toBe('10.0000');
  });

  it('refuses a too-long clip without trim options, naming them; clips under 2 s; short edit clips', async () => {
    const a = await s.account(10);
    const long = await create(a.key, { video_urls: [await clip(a.key, 20)] });
    expect(long.status).toBe(400);
    expect(long.body.msg).toMatch(/2 to 15 s.*trim_video_to or input\.trim_to_duration.*got a clip of 20 s/);
    const short = await create(a.key, { video_urls: [await clip(a.key, 1)] });
    expect(short.status).toBe(400);
    expect(short.body.msg).toMatch(/2 to 15 s.*got a clip of 1 s/);
    const edit = await create(a.key, { video_mode: 'edit', video_urls: [await clip(a.key, 3)] });
    expect(edit.status).toBe(400);
    expect(edit.body.msg).toMatch(/at least 4 s in video_mode "edit"/);
    expect(await balance(a.key)).toBe('10.0000');
  });

  // seedance-2.0-fast at 720p with client video: 0.067 USD per second of result plus source.
  it.each([
    ['trim_video_to', { trim_video_to: 8 }, [20], [8], '0.871'],
    ['trim_to_duration', { trim_to_duration: true, duration: 6 }, [20], [6], '0.804'],
    ['auto_trim', { auto_trim: true }, [10, 10], [7, 7], '1.273'],
    ['trim_to_duration in edit mode', { trim_to_duration: true, video_mode: 'edit' }, [20], [15], '2.010'],
    ['no trim needed', { trim_video_to: 8 }, [5], [5], '0.670'],
  ])('%s: prices the kept seconds and trims the real files before the backend', async (_name, options, lengths, kept, price) => {
    const a = await s.account(10);
    const urls = [];
    for (const n of lengths) urls.push(await clip(a.key, n));
    const r = await create(a.key, { ...options, video_urls: urls });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const task = await settle(s, a.key, r.body.data.taskId);
    expect(task.state, task.failMsg).toBe('success');
    expect(task.costUsd).toBe(price);
    const row = await s.services.database.db.selectFrom('tasks').select(['input', 'media']).where('id', '=', task.taskId).executeTakeFirstOrThrow();
    const seen = JSON.parse(row.input).video_urls as string[];
    for (const [i, link] of seen.entries()) {
      expect(link === urls[i]).toBe(kept[i] === lengths[i]);
      expect(await secondsAt(link)).toBeCloseTo(kept[i]!, 0);
      expect(JSON.parse(row.media!)[link].seconds).toBe(kept[i]);
    }
    expect(JSON.parse(task.param).input.video_urls).toEqual(urls);
  });

  it('does not re-encode a stored clip over the video limits: the task fails naming the limit, never a server path', async () => {
    const a = await s.account(10);
    const video = await clip(a.key, 20);
    // Stored under other settings (or before the limits existed): the engine's trim checks again.
    configureMedia({ video: { ...DEFAULT_VIDEO_LIMITS, maxSide: 64 } });
    try {
      const r = await create(a.key, { trim_video_to: 10, video_urls: [video] });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      const task = await settle(s, a.key, r.body.data.taskId);
      expect(task.state).toBe('fail');
      expect(task.failMsg).toMatch(/input\.video_urls\[0\]: file must be a video of at most 64 pixels per side .*got 96×64/);
      expect(task.failMsg).not.toMatch(/gengate-trim|\/tmp\/|ffmpeg|ffprobe/);
      expect(await balance(a.key)).toBe('10.0000');
    } finally {
      configureMedia({ video: DEFAULT_VIDEO_LIMITS });
    }
  });

  it('trims audio clips too and keeps their format', async () => {
    const a = await s.account(10);
    const audio = await clip(a.key, 20, 'audio');
    const r = await create(a.key, { trim_video_to: 10, audio_urls: [audio], video_urls: [await clip(a.key, 4)] });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const task = await settle(s, a.key, r.body.data.taskId);
    expect(task.state, task.failMsg).toBe('success');
    const row = await s.services.database.db.selectFrom('tasks').select('input').where('id', '=', task.taskId).executeTakeFirstOrThrow();
    const [link] = JSON.parse(row.input).audio_urls as string[];
    expect(link).toMatch(/\.mp3$/);
    expect(link).not.toBe(audio);
    expect(await secondsAt(link!)).toBeCloseTo(10, 0);
    expect((await info(s, a.key, task.taskId)).state).toBe('success');
  });
});
