import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LocalBackend, type BackendJob } from '../../src/backends/index.js';
import { eventually } from '../tasks/support.js';

/** The local backend's cancel (decision 1901): always confirmed, and it stops a render nobody else waits for. */
describe('local backend cancel', () => {
  const cache = mkdtempSync(path.join(tmpdir(), 'gengate-local-cancel-'));
  afterAll(() => rmSync(cache, { recursive: true, force: true }));
  const local = new LocalBackend({ now: () => Date.now() }, { queueMs: 0, generateMs: 0, fail: 'none', cacheDir: cache });
  const video = (taskId: string, prompt: string): BackendJob => ({
    taskId,
    model: 'seedance-2.5',
    kind: 'video',
    input: { prompt, duration: 15, resolution: '1080p', aspect_ratio: '16:9', seed: 7 },
    media: {},
  });
  /** Renders in progress (the backend's own table; nothing outside shows a render that has not written its file yet). */
  const renders = () => (local as unknown as { inFlight: Map<string, { waiters: Set<string> }> }).inFlight;

  it('a render only the cancelled task waits for is stopped: its step ends without a result and no file is cached', async () => {
    const job = video('tk_a', 'stop me');
    const result = local.results(job).then(
      () => 'rendered',
      (e: unknown) => String(e),
    );
    await eventually(() => [...renders().values()].some((r) => r.waiters.has('tk_a')));
    expect(await local.cancel(job)).toBe('cancelled');
    expect(await result).toMatch(/could not make the video/);
    expect(renders().size).toBe(0);
    expect(readdirSync(cache).filter((f) => f.endsWith('.mp4'))).toEqual([]);
  }, 60_000);

  it('a render another task waits for goes on: that task gets its file', async () => {
    const a = video('tk_b', 'shared render');
    const b = video('tk_c', 'shared render');
    const first = local.results(a).then(
      () => 'rendered',
      (e: unknown) => String(e),
    );
    const second = local.results(b);
    await eventually(() => [...renders().values()].some((r) => r.waiters.has('tk_b') && r.waiters.has('tk_c')));
    expect(await local.cancel(a)).toBe('cancelled');
    const out = await second;
    expect(out.files).toHaveLength(1);
    // The cancelled task's step gets the file too; the engine's fenced write then drops it.
    expect(await first).toBe('rendered');
  }, 120_000);

  it('a job with nothing running is cancelled at once', async () => {
    expect(await local.cancel(video('tk_d', 'idle'))).toBe('cancelled');
  });
});
