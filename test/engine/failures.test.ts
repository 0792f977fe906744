import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalBackend, type Backend, type BackendJob } from '../../src/backends/index.js';
import { buildServices } from '../../src/services.js';
import { dialects, onPostgres } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { FAST, MovableClock, create, eventually, expectLedgerInvariant, info, settle, taskEntries } from '../tasks/support.js';

/** SPEC "Task failures": marker → failCode and error.type. */
const CODES: Array<[string, number, string]> = [
  ['400', 400, 'invalid_request_error'],
  ['nsfw', 400, 'nsfw_content_detected'],
  ['422', 422, 'invalid_request_error'],
  ['500', 500, 'server_error'],
  ['501', 501, 'server_error'],
  ['503', 503, 'server_error'],
  ['504', 504, 'timeout_error'],
];

/** A backend that misbehaves as its prompt says, and otherwise behaves like the local one. */
function scripted(local: Backend): Backend & { submits: number } {
  const said = (job: BackendJob) => String(job.input.prompt ?? '');
  const backend = {
    name: 'local',
    submits: 0,
    async submit(job: BackendJob) {
      backend.submits++;
      if (said(job).includes('throws')) throw new Error('upstream exploded');
      if (said(job).includes('hangs')) return new Promise<string>(() => {});
      if (said(job).includes('bad-ref')) return 42 as unknown as string;
      return local.submit(job);
    },
    async progress(job: BackendJob, ref: string) {
      if (said(job).includes('bad-state')) return { state: 'exploded' } as never;
      if (said(job).includes('fails-after-accept')) return { state: 'failed', kind: 'generation', message: 'the model gave up' } as const;
      if (said(job).includes('leaks-path')) {
        return {
          state: 'failed',
          kind: 'generation',
          message:
            'render of file:/var/lib/gengate/render-cache/ab.mp4 failed (encode data/render-cache/ab.mp4: ffmpeg exited with code 1: Conversion failed!), see https://status.example.com/x\n[libx264 @ 0x55] /srv/gengate/tmp/ab.part: No space left',
        } as const;
      }
      return local.progress(job, ref);
    },
    async results(job: BackendJob, ref: string) {
      if (said(job).includes('no-files')) return { files: [] };
      if (said(job).includes('wrong-kind')) return { files: [{ path: process.execPath, mime: 'image/png' }] };
      return local.results(job, ref);
    },
    cancel: async () => 'cancelled' as const,
  };
  return backend;
}

describe.each(dialects())('task failures on %s', (dialect) => {
  let s: TestServer;
  const clock = new MovableClock();
  beforeAll(async () => {
    const env = { ...FAST, ENGINE_MAX_ATTEMPTS: '3', BACKEND_CALL_TIMEOUT_MS: '1500' };
    const probe = await startServer(dialect, env);
    const local = new LocalBackend(clock, { queueMs: 0, generateMs: 0, fail: 'none', cacheDir: `${probe.db.dir}/cache` });
    await probe.close();
    s = await startServer(dialect, env, undefined, { clock, backends: { local: scripted(local) } });
    s.services.engine.start();
  });
  afterAll(() => s.close());

  async function expectRefunded(key: string, id: string, code: number, type: string) {
    const t = await settle(s, key, id);
    expect(t).toMatchObject({ state: 'fail', status: 'failed', failCode: code, refunded: true, creditsConsumed: 0, resultJson: null });
    expect(t.error).toEqual({ code, message: t.failMsg, type });
    expect(t.failMsg).not.toBe('');
    expect(t.completeTime).toEqual(expect.any(Number));
    const entries = await taskEntries(s, id);
    expect(entries.refund).toBe(-entries.charge!);
    expect(Object.keys(entries).sort()).toEqual(['charge', 'refund']);
    return t;
  }

  it.each(CODES)('local marker gengate:fail=%s fails with %i %s and refunds in full', async (marker, code, type) => {
    const a = await s.account(1);
    const id = await create(s, a.key, 'nano-banana-2', { prompt: `a cat gengate:fail=${marker}` });
    await expectRefunded(a.key, id, code, type);
    expect((await s.call('GET', '/api/v1/user/balance', { key: a.key })).body.data.balance).toBe('1.0000');
  });

  it('a backend that throws is retried, then the task fails 503 and is refunded', async () => {
    const a = await s.account(1);
    const t = await expectRefunded(a.key, await create(s, a.key, 'suno-v6', { prompt: 'throws' }), 503, 'server_error');
    expect(t.failMsg).toMatch(/failed 3 times.*upstream exploded/);
  });

  it('a backend that hangs is cut off by BACKEND_CALL_TIMEOUT_MS, retried, then failed', async () => {
    const a = await s.account(1);
    const t = await expectRefunded(a.key, await create(s, a.key, 'suno-v6', { prompt: 'hangs' }), 503, 'server_error');
    expect(t.failMsg).toMatch(/did not answer within 1500 ms/);
  });

  it('garbage from a backend (bad reference, unknown state, no files, wrong kind of file) fails the task, never succeeds it', async () => {
    const a = await s.account(2);
    for (const [prompt, code] of [
      ['bad-ref', 503],
      ['bad-state', 503],
      ['no-files', 500],
      ['wrong-kind', 500],
    ] as const) {
      const t = await expectRefunded(a.key, await create(s, a.key, 'suno-v6', { prompt }), code, 'server_error');
      expect(t.failMsg.length).toBeGreaterThan(10);
    }
  });

  it('a backend that fails after accepting the job: 501, refunded', async () => {
    const a = await s.account(1);
    const t = await expectRefunded(a.key, await create(s, a.key, 'suno-v6', { prompt: 'fails-after-accept' }), 501, 'server_error');
    expect(t.failMsg).toBe('the model gave up');
  });

  it('a failure message that names server files or carries tool output is cleaned before a client sees it', async () => {
    const a = await s.account(1);
    const t = await expectRefunded(a.key, await create(s, a.key, 'suno-v6', { prompt: 'leaks-path' }), 501, 'server_error');
    expect(t.failMsg).toBe('render of (a server file) failed (encode (a server file): ffmpeg exited with code 1), see https://status.example.com/x');
  });

  // In one process two SQLite connections deadlock (better-sqlite3 waits synchronously); crash.test.ts runs two processes on SQLite.
  onPostgres(dialect)('two engines on one database move every task exactly once', async () => {
    const second = await buildServices(s.config, { clock });
    second.engine.start();
    try {
      const a = await s.account(20);
      const ids = await Promise.all(
        Array.from({ length: 24 }, (_, i) => create(s, a.key, 'seedream-flash', { prompt: i % 3 === 0 ? `p${i} gengate:fail=501` : `p${i}` })),
      );
      const done = await Promise.all(ids.map((id) => settle(s, a.key, id)));
      expect(done.filter((t) => t.state === 'fail')).toHaveLength(8);
      const finals = await s.services.database.db
        .selectFrom('task_events')
        .select(['task_id'])
        .where('task_id', 'in', ids)
        .where('to_state', 'in', ['success', 'fail'])
        .execute();
      expect(finals).toHaveLength(24);
      for (const id of ids) {
        const e = await taskEntries(s, id);
        expect(e.charge).toBe(-15_000);
      }
      await expectLedgerInvariant(s.services.database);
    } finally {
      await second.close();
    }
  });

  it('a task not final 20 minutes after creation fails 504 timeout_error and is refunded', async () => {
    const a = await s.account(1);
    const id = await create(s, a.key, 'suno-v6', { prompt: 'stuck gengate:fail=hang' });
    await eventually(async () => (await info(s, a.key, id)).state === 'generating');
    clock.advance(20 * 60_000);
    const t = await expectRefunded(a.key, id, 504, 'timeout_error');
    expect(t.failMsg).toMatch(/20 minutes/);
    await expectLedgerInvariant(s.services.database);
  });
});

describe('LOCAL_FAIL', () => {
  it('fails every task with the set code', async () => {
    const s = await startServer('sqlite', { ...FAST, LOCAL_FAIL: '422' });
    s.services.engine.start();
    try {
      const a = await s.account(1);
      const t = await settle(s, a.key, await create(s, a.key, 'suno-v6', { prompt: 'fine' }));
      expect(t).toMatchObject({ state: 'fail', failCode: 422, refunded: true });
    } finally {
      await s.close();
    }
  });
});

describe.each(dialects())('a local render that fails on %s', (dialect) => {
  it("shows the client what went wrong, never a server path or ffmpeg's words; the log keeps the detail", async () => {
    const clock = new MovableClock();
    const probe = await startServer(dialect);
    // A render cache whose own path fits the system's limit but whose files do not: ffmpeg really fails
    // ("File name too long") and its message names the file under the cache.
    let cacheDir = probe.db.dir;
    while (cacheDir.length < 4040 - 200) cacheDir = path.join(cacheDir, 'd'.repeat(200));
    cacheDir = path.join(cacheDir, 'd'.repeat(4040 - cacheDir.length - 1));
    await probe.close();
    const local = new LocalBackend(clock, { queueMs: 0, generateMs: 0, fail: 'none', cacheDir });
    const s = await startServer(dialect, { ...FAST, ENGINE_MAX_ATTEMPTS: '2' }, undefined, { clock, backends: { local } });
    const logged: object[] = [];
    s.services.engine.start({ warn: (obj) => logged.push(obj), error: (obj) => logged.push(obj) });
    try {
      const a = await s.account(1);
      const t = await settle(s, a.key, await create(s, a.key, 'suno-v6', { prompt: 'fine' }));
      expect(t).toMatchObject({ state: 'fail', failCode: 503, refunded: true });
      expect(t.failMsg).toMatch(/the local renderer could not make the music: ffmpeg failed/);
      for (const shown of [t.failMsg, t.error.message]) {
        expect(shown).not.toContain(probe.db.dir);
        expect(shown).not.toMatch(/ffmpeg exited|file:|too long|\/tmp\/|dddd/i);
      }
      expect(JSON.stringify(logged.map((o) => ({ ...o, err: String((o as { err?: Error }).err?.cause ?? '') })))).toMatch(/File name too long/);
    } finally {
      await s.close();
    }
  });
});
