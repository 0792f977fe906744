import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers/db.js';
import { startServerOnFreePort, type TestServer } from '../helpers/server.js';
import { PYTHON, needs } from '../helpers/tools.js';
import { makeClip, makeStill, makeTone } from '../media/helpers.js';
import { FAST } from '../tasks/support.js';

/**
 * The Python SDK (clients/python) against live GenGates: its pytest suite runs with Debian's python3
 * (TEST_PYTHON, default /usr/bin/python3; CI installs python3-httpx and python3-pytest; .ci/run); without
 * them the file skips with a notice (test/helpers/tools.ts). Three servers: `main` (engine and callback
 * delivery running, private addresses allowed so the suite's own webhook receiver on 127.0.0.1 gets
 * deliveries), `idle` (no engine: tasks stay waiting, for cancel and paging) and `limited` (2 writes and
 * 3 reads a second, for 429 handling). Each listens on a port chosen before it starts, so the file links
 * it writes (PUBLIC_BASE_URL) reach it.
 */

/** Runs pytest; resolves with its exit code and output (never rejects on a failing suite). */
function pytest(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(PYTHON, ['-m', 'pytest', 'clients/python/tests', '-q', '-p', 'no:cacheprovider', '-rfE'], {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', PYTHONDONTWRITEBYTECODE: '1', PYTHONPATH: path.resolve('clients/python'), ...env },
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, output }));
  });
}

describe.skipIf(!needs('python')).each(dialects())('Python SDK against a live GenGate (%s)', (dialect) => {
  let main: TestServer;
  let idle: TestServer;
  let limited: TestServer;
  let media: string;
  const env: Record<string, string> = {};

  beforeAll(async () => {
    main = await startServerOnFreePort(dialect, { ...FAST, ALLOW_PRIVATE_NETWORK: 'true', CALLBACK_RETRY_DELAYS_MS: '200,500,1000' });
    main.services.engine.start();
    main.services.callbacks.start();
    idle = await startServerOnFreePort(dialect, FAST);
    limited = await startServerOnFreePort(dialect, { ...FAST, RATE_LIMIT_WRITE: '2', RATE_LIMIT_READ: '3', RATE_LIMIT_WINDOW_SECONDS: '1' });
    limited.services.engine.start();
    const rich = await main.account(100, 'python-sdk');
    media = mkdtempSync(path.join(tmpdir(), 'gengate-py-'));
    await Promise.all([
      makeStill(path.join(media, 'photo.jpg'), '320x240'),
      makeClip(path.join(media, 'clip.mp4'), { seconds: 3 }),
      makeClip(path.join(media, 'clip.mov'), { seconds: 3 }),
      makeTone(path.join(media, 'song.mp3'), 3),
    ]);
    Object.assign(env, {
      GENGATE_BASE_URL: main.url,
      GENGATE_API_KEY: rich.key,
      GENGATE_WEBHOOK_SECRET: await main.services.accounts.webhookSecret(rich.id),
      GENGATE_POOR_API_KEY: (await main.account(0, 'poor')).key,
      GENGATE_IDLE_BASE_URL: idle.url,
      GENGATE_IDLE_API_KEY: (await idle.account(10, 'idle')).key,
      GENGATE_LIMITED_BASE_URL: limited.url,
      GENGATE_LIMITED_API_KEY: (await limited.account(10, 'limited')).key,
      GENGATE_TEST_MEDIA: media,
    });
  }, 240_000);

  afterAll(async () => {
    await Promise.all([main?.close(), idle?.close(), limited?.close()]);
    if (media) rmSync(media, { recursive: true, force: true });
  });

  it('passes the pytest suite of clients/python', async () => {
    const { code, output } = await pytest(env);
    expect(code, `pytest failed (exit ${code}):\n${output}`).toBe(0);
    expect(output).toMatch(/\d+ passed/);
  }, 300_000);
});
