import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import type { Backend, BackendJob, BackendStatus } from '../../src/backends/index.js';
import { NotAccepted, UpstreamHttp } from '../../src/backends/upstream/index.js';
import { NetGuard } from '../../src/net/index.js';
import { ffmpeg, makeClip, makeStill } from '../media/helpers.js';

/** Real media for fakes to serve (made once per file by ffmpeg), an UpstreamHttp on a guard that allows loopback, and a download folder. */
export function useUpstreamKit() {
  const kit = { dir: '', tmpDir: '', video: '', frame: '', image: '', tracks: [] as string[], http: undefined as unknown as UpstreamHttp };
  const guard = new NetGuard({ allowPrivate: true });
  beforeAll(async () => {
    kit.dir = await mkdtemp(path.join(tmpdir(), 'gengate-upstream-'));
    kit.tmpDir = path.join(kit.dir, 'downloads');
    await (await import('node:fs/promises')).mkdir(kit.tmpDir);
    kit.video = await makeClip(path.join(kit.dir, 'video.mp4'), { seconds: 2 });
    kit.frame = await makeStill(path.join(kit.dir, 'frame.png'));
    kit.image = await makeStill(path.join(kit.dir, 'image.jpg'));
    kit.tracks = [
      await ffmpeg('-f', 'lavfi', '-i', 'sine=f=330:d=1', path.join(kit.dir, 'track-1.mp3')),
      await ffmpeg('-f', 'lavfi', '-i', 'sine=f=440:d=1', path.join(kit.dir, 'track-2.mp3')),
    ];
    kit.http = new UpstreamHttp(guard, { timeoutMs: 5000 });
  });
  afterAll(async () => {
    guard.close();
    await rm(kit.dir, { recursive: true, force: true });
  });
  return kit;
}

let n = 0;
/** A job as the engine hands it over. */
export function jobOf(model: string, kind: BackendJob['kind'], input: Record<string, unknown>, webhookUrl?: string): BackendJob {
  n++;
  return { taskId: `task_${n}`, model, kind, input, media: {}, ...(webhookUrl ? { webhookUrl } : {}) };
}

/** Polls progress until the job leaves queued/running; returns every state seen. */
export async function pollUntilSettled(backend: Backend, job: BackendJob, ref: string, max = 20): Promise<BackendStatus[]> {
  const seen: BackendStatus[] = [];
  for (let i = 0; i < max; i++) {
    const s = await backend.progress(job, ref);
    seen.push(s);
    if (s.state !== 'queued' && s.state !== 'running') return seen;
  }
  throw new Error(`still ${seen.at(-1)?.state} after ${max} polls`);
}

/** The rejection of a promise (fails the test when it resolves). */
export async function rejectionOf(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    (v) => {
      throw new Error(`expected a failure, got ${JSON.stringify(v)}`);
    },
    (e: unknown) => e,
  );
}

/** Asserts a NotAccepted and returns it. */
export async function notAccepted(p: Promise<unknown>): Promise<NotAccepted> {
  const e = await rejectionOf(p);
  expect(e).toBeInstanceOf(NotAccepted);
  return e as NotAccepted;
}
