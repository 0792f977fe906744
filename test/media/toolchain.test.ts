import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkToolchain, describeToolchain, resolveBinary, setBinary } from '../../src/media/index.js';
import { spawnServe, stop } from '../helpers/cli.js';
import { createTestDb, dialects } from '../helpers/db.js';
import { startServer } from '../helpers/server.js';

/** Issue 17 item 8: /readyz runs the media toolchain, and `serve` says which ffmpeg it uses. */

let dir = '';
/** An "ffmpeg" that starts but fails, saying something with a server path in it. */
let broken = '';
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'gengate-toolchain-'));
  broken = path.join(dir, 'ffmpeg-broken');
  await writeFile(broken, '#!/bin/sh\necho "error while loading shared libraries: /secret/lib/libavdevice.so.59" >&2\nexit 127\n');
  await chmod(broken, 0o755);
});
afterAll(async () => {
  setBinary('ffmpeg', null);
  setBinary('ffprobe', null);
  await rm(dir, { recursive: true, force: true });
});

describe('the media toolchain', () => {
  it('names the binaries it runs, with their versions', async () => {
    const tools = await describeToolchain();
    for (const tool of ['ffmpeg', 'ffprobe'] as const) {
      expect(tools[tool]).toMatchObject({
        path: resolveBinary(tool).path,
        source: expect.stringMatching(/^(system|npm)$/),
        version: expect.stringMatching(/\S/),
      });
      expect(tools[tool].version).not.toBe('unknown');
    }
    await expect(checkToolchain()).resolves.toBeUndefined();
  });

  it('fails the check when a tool does not run, and checks again once the binary changes', async () => {
    setBinary('ffmpeg', broken);
    await expect(checkToolchain()).rejects.toMatchObject({ name: 'MediaError', op: 'ffmpeg check' });
    setBinary('ffmpeg', null);
    await expect(checkToolchain()).resolves.toBeUndefined();
  });
});

for (const dialect of dialects()) {
  describe(`/readyz checks ffmpeg and ffprobe (${dialect})`, () => {
    it('answers 200 with media ok when both run', async () => {
      const s = await startServer(dialect, { RUN_ENGINE: 'false' });
      try {
        const r = await s.call('GET', '/readyz');
        expect(r.status).toBe(200);
        expect(r.body).toEqual({ status: 'ok', checks: { database: 'ok', blobs: 'ok', media: 'ok' } });
      } finally {
        await s.close();
      }
    });

    it.each([
      ['FFMPEG_PATH', 'ffmpeg', () => broken],
      ['FFPROBE_PATH', 'ffprobe', () => path.join(dir, 'no-such-ffprobe')],
    ])('answers 503 naming the tool, never its path or output, when %s points at a binary that fails', async (setting, tool, file) => {
      const s = await startServer(dialect, { RUN_ENGINE: 'false', [setting]: file() });
      try {
        const r = await s.call('GET', '/readyz');
        expect(r.status).toBe(503);
        expect(r.headers.get('cache-control')).toBe('no-store');
        expect(r.body).toEqual({
          status: 'unavailable',
          checks: { database: 'ok', blobs: 'ok', media: `error: ${tool} does not run (the server log says why)` },
        });
        expect(JSON.stringify(r.body)).not.toMatch(/secret|no-such|gengate-toolchain/);
        expect((await s.call('GET', '/healthz')).status).toBe(200);
      } finally {
        await s.close();
      }
    });
  });
}

describe('gengate serve', () => {
  /** Waits until the server has printed a line matching `re` (or fails after 30 s). */
  async function printed(server: Awaited<ReturnType<typeof spawnServe>>, re: RegExp): Promise<string> {
    const line = () =>
      server
        .output()
        .split('\n')
        .find((l) => re.test(l));
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no line ${re} in:\n${server.output()}`)), 30_000);
      const look = () => {
        if (!line()) return;
        clearTimeout(timer);
        server.child.stdout!.off('data', look);
        resolve();
      };
      server.child.stdout!.on('data', look);
      look();
    });
    return line()!;
  }

  it('says at start which ffmpeg and ffprobe it uses, and warns when one does not run', async () => {
    const db = await createTestDb('sqlite');
    const good = await spawnServe({ DATABASE_URL: db.url, DATA_DIR: db.dir, RUN_ENGINE: 'false' });
    try {
      const line = await printed(good, /^media: /);
      expect(line).toMatch(/^media: ffmpeg \/\S+ \((system|npm), version \S+\), ffprobe \/\S+ \((system|npm), version \S+\)$/);
    } finally {
      await stop(good.child);
    }
    const bad = await spawnServe({ DATABASE_URL: db.url, DATA_DIR: db.dir, RUN_ENGINE: 'false', FFMPEG_PATH: broken });
    try {
      expect(await printed(bad, /^media: /)).toMatch(/^media: WARNING, ffmpeg\/ffprobe do not run/);
    } finally {
      await stop(bad.child);
      await db.drop();
    }
  }, 240_000); // several runs of the real CLI or server, each a new process loading the sources: slow on a busy machine
});
