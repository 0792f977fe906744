import { createReadStream, openAsBlob } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AbortedError,
  AuthenticationError,
  GenGateError,
  InvalidRequestError,
  PaymentRequiredError,
  TaskFailedError,
  TaskNotCancellableError,
  TaskNotFoundError,
  TimeoutError,
  UnsupportedModelError,
  type Task,
} from '../../packages/client/src/index.js';
import { dialects } from '../helpers/db.js';
import { startServer } from '../helpers/server.js';
import { makeClip, makeStill, makeTone, useTmpDir } from '../media/helpers.js';
import { expectLedgerInvariant, taskEntries } from '../tasks/support.js';
import { sdk, startPublicServer } from './support.js';

describe.each(dialects())('the TypeScript SDK against a live GenGate on %s', (dialect) => {
  let s: Awaited<ReturnType<typeof startPublicServer>>;
  let key: string;
  const tmp = useTmpDir();
  beforeAll(async () => {
    s = await startPublicServer(dialect);
    key = (await s.account(50)).key;
  });
  afterAll(async () => {
    await expectLedgerInvariant(s.services.database);
    await s.close();
  });

  it.each([
    ['nano-banana-2', { prompt: 'a lighthouse at dusk', resolution: '1K', aspect_ratio: '1:1' }, 'image', 1],
    ['wan-3.0', { prompt: 'waves on a rock', duration: 5, resolution: '480p' }, 'video', 1],
    ['suno-v6', { prompt: 'a sea shanty' }, 'audio', 2],
  ] as const)('runs %s to success: typed file links that download, the cost, progress reports', async (model, input, kind, count) => {
    const gg = sdk(s, key);
    const seen: Task[] = [];
    const before = await gg.balance();
    const r = await gg.run(model, input, { onProgress: (t) => seen.push(t), timeoutMs: 60_000 });
    expect(r.task.state).toBe('success');
    expect(r.files).toHaveLength(count);
    for (const f of r.files) {
      expect(f.kind).toBe(kind);
      expect(f.url.startsWith(`${s.publicUrl}/files/`)).toBe(true);
      const res = await gg.files.download(f.url);
      expect((await res.arrayBuffer()).byteLength).toBeGreaterThan(100);
    }
    expect(r.costMicros).toBeGreaterThan(0);
    expect(r.costMicros).toBe(Math.round(Number(r.costUsd) * 1_000_000));
    if (kind === 'video') expect(r.duration).toBe(5);
    // The charge is the task's cost, exactly, in micro-USD.
    expect(before.micros - (await gg.balance()).micros).toBe(r.costMicros);
    expect(-(await taskEntries(s, r.taskId)).charge!).toBe(r.costMicros);
    for (const t of seen) expect(['waiting', 'queuing', 'generating']).toContain(t.state);
  });

  it('uploads a photo, a video and a sound from a path, bytes, a Blob, a Node stream and a web stream', async () => {
    const gg = sdk(s, key);
    const photo = await makeStill(tmp('photo.png'));
    const clip = await makeClip(tmp('clip.mp4'), { seconds: 3 });
    const tone = await makeTone(tmp('tone.mp3'), 2);
    const fromPath = await gg.files.upload(photo);
    expect(fromPath).toMatchObject({ kind: 'image', fileName: 'photo.png', seconds: 0 });
    const fromBytes = await gg.files.upload(await readFile(clip), { name: 'clip.mp4' });
    expect(fromBytes).toMatchObject({ kind: 'video', fileName: 'clip.mp4', seconds: 3 });
    const fromBlob = await gg.files.upload(new File([await readFile(photo)], 'named.png'));
    expect(fromBlob).toMatchObject({ kind: 'image', fileName: 'named.png' });
    const fromNodeStream = await gg.files.upload(createReadStream(tone), { name: 'tone.mp3' });
    expect(fromNodeStream).toMatchObject({ kind: 'audio', fileName: 'tone.mp3', seconds: 2 });
    const fromWebStream = await gg.files.upload((await openAsBlob(clip)).stream(), { name: 'web.mp4' });
    expect(fromWebStream).toMatchObject({ kind: 'video', fileName: 'web.mp4', seconds: 3 });
    // The bytes came through whole.
    expect(Buffer.from(await (await gg.files.download(fromPath.url)).arrayBuffer()).equals(await readFile(photo))).toBe(true);
    // An upload the server refuses is a typed error with the server's words.
    const refused = await gg.files.upload(Buffer.from('not a photo at all'), { name: 'x.txt' }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(InvalidRequestError);
    expect(refused).toMatchObject({ status: 422, error: 'validation_error' });
    // And a file used in a run: the photo as a reference.
    const r = await gg.run('nano-banana-2', { prompt: 'like this', image_input: [fromPath.url] }, { timeoutMs: 60_000 });
    expect(r.files[0]!.kind).toBe('image');
  });

  it('throws the error class of each refusal, with status, msg and request id; nothing charged', async () => {
    const gg = sdk(s, key);
    const before = (await gg.balance()).micros;
    const failed = await gg.run('nano-banana-2', { prompt: 'gengate:fail=500 a storm' }, { timeoutMs: 60_000 }).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(TaskFailedError);
    expect(failed).toMatchObject({ failCode: 500, task: { state: 'fail', refunded: true } });
    const unknown = await gg.run('no-such-model', { prompt: 'x' }).catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(UnsupportedModelError);
    expect(unknown).toBeInstanceOf(InvalidRequestError);
    expect(unknown).toMatchObject({ status: 400, error: 'unsupported_model', requestId: expect.any(String) });
    expect((unknown as GenGateError).msg).toMatch(/no-such-model/);
    const bad = await gg.tasks.create('nano-banana-2', { prompt: 'x', resolution: '9K' as never }).catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(InvalidRequestError);
    expect((bad as GenGateError).msg).toMatch(/resolution/);
    const poor = await sdk(s, (await s.account(0.001)).key)
      .run('wan-3.0', { prompt: 'x' })
      .catch((e: unknown) => e);
    expect(poor).toBeInstanceOf(PaymentRequiredError);
    expect((poor as GenGateError).data).toMatchObject({ currency: 'USD', topUpUrl: expect.any(String) });
    expect(
      await sdk(s, 'gg_wrong')
        .balance()
        .catch((e: unknown) => e),
    ).toBeInstanceOf(AuthenticationError);
    expect(await gg.tasks.get('tk_nothing').catch((e: unknown) => e)).toBeInstanceOf(TaskNotFoundError);
    expect((await gg.balance()).micros).toBe(before);
  });

  it('creates with an Idempotency-Key: the same key gives the same task, charged once', async () => {
    const gg = sdk(s, key);
    const a = await gg.tasks.create('nano-banana-2', { prompt: 'twice' }, { idempotencyKey: 'sdk-test-1' });
    const b = await gg.tasks.create('nano-banana-2', { prompt: 'twice' }, { idempotencyKey: 'sdk-test-1' });
    expect(b).toEqual({ taskId: a.taskId, status: a.status, replayed: true });
    expect(a.replayed).toBe(false);
    await gg.tasks.wait(a.taskId, { timeoutMs: 60_000 });
  });

  it('pages through the tasks with an async iterator: every task once, newest first', async () => {
    const other = await s.account(5);
    const gg = sdk(s, other.key);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await gg.tasks.create('nano-banana-2', { prompt: `page ${i}` })).taskId);
    const seen: string[] = [];
    for await (const t of gg.tasks.list({ limit: 2 })) seen.push(t.taskId);
    expect(seen).toEqual([...ids].reverse());
    const pages = [];
    for await (const p of gg.tasks.list({ limit: 2 }).pages()) pages.push(p.items.length);
    expect(pages).toEqual([2, 2, 1]);
    for (const id of ids) await gg.tasks.wait(id, { timeoutMs: 60_000 });
  });

  it('gives the balance, the price of an input and the catalog', async () => {
    const gg = sdk(s, key);
    expect(await gg.balance()).toMatchObject({ currency: 'USD', balance: expect.stringMatching(/^\d+\.\d{4}$/) });
    const price = await gg.prices.calculate({ model: 'seedance-2.5', resolution: '480p', duration: 'auto', reference_video_seconds: 2.5 });
    expect(price).toMatchObject({ ok: true, model: 'seedance-2.5', billable_seconds: 32.5, price_usd: 2.438 });
    const wrong = await gg.prices.calculate({ model: 'seedance-2.0-fast', duration: 20 }).catch((e: unknown) => e);
    expect(wrong).toBeInstanceOf(InvalidRequestError);
    expect(wrong).toMatchObject({ status: 400, error: 'invalid_parameter' });
    expect((await gg.models.list()).map((m) => m.id)).toContain('suno-v6');
  });
});

describe.each(dialects())('cancel through the SDK on %s', (dialect) => {
  it('cancels a waiting task (refunded) and refuses a second cancel with TaskNotCancellableError', async () => {
    const s = await startPublicServer(dialect, { RUN_ENGINE: 'false' });
    try {
      const gg = sdk(s, (await s.account(5)).key);
      const before = (await gg.balance()).micros;
      const { taskId } = await gg.tasks.create('nano-banana-2', { prompt: 'never mind' });
      expect((await gg.balance()).micros).toBeLessThan(before);
      expect(await gg.tasks.cancel(taskId)).toMatchObject({ taskId, state: 'fail', failCode: 499, refunded: true });
      expect((await gg.balance()).micros).toBe(before);
      const again = await gg.tasks.cancel(taskId).catch((e: unknown) => e);
      expect(again).toBeInstanceOf(TaskNotCancellableError);
      expect(again).toMatchObject({ status: 409, error: 'task_not_cancellable' });
      // A wait ends on the caller's signal or timeout; the task stays as it is.
      const waiting = await gg.tasks.create('nano-banana-2', { prompt: 'still waiting' });
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 100);
      expect(await gg.tasks.wait(waiting.taskId, { signal: controller.signal }).catch((e: unknown) => e)).toBeInstanceOf(AbortedError);
      expect(await gg.tasks.wait(waiting.taskId, { timeoutMs: 100 }).catch((e: unknown) => e)).toBeInstanceOf(TimeoutError);
      expect((await gg.tasks.get(waiting.taskId)).state).toBe('waiting');
      // run() over a cancelled task ends in TaskFailedError with the cancel's code.
      expect(await gg.tasks.wait(taskId).catch((e: unknown) => e)).toMatchObject({ failCode: 499 });
    } finally {
      await s.close();
    }
  });
});

describe('429 with Retry-After', () => {
  it('waits as long as Retry-After says and goes on; with no retries left it throws RateLimitError', async () => {
    const s = await startServer('sqlite', { RATE_LIMIT_WINDOW_SECONDS: '1', RATE_LIMIT_READ: '1', RATE_LIMIT_WRITE: '1000', RUN_ENGINE: 'false' });
    try {
      const key = (await s.account(5)).key;
      const answers: Array<{ status: number; at: number; retryAfter: string | null }> = [];
      const counting: typeof fetch = async (input, init) => {
        const res = await fetch(input, init);
        answers.push({ status: res.status, at: Date.now(), retryAfter: res.headers.get('retry-after') });
        return res;
      };
      const gg = sdk({ publicUrl: s.url }, key, { fetch: counting });
      const { taskId } = await gg.tasks.create('nano-banana-2', { prompt: 'slowly' });
      // Three reads in a row against a limit of one per second: the second and third meet 429 first.
      for (let i = 0; i < 3; i++) expect((await gg.tasks.get(taskId)).taskId).toBe(taskId);
      const limited = answers.filter((a) => a.status === 429);
      expect(limited.length).toBeGreaterThan(0);
      for (const a of limited) {
        expect(Number(a.retryAfter)).toBeGreaterThanOrEqual(1);
        const next = answers[answers.indexOf(a) + 1]!;
        expect(next.at - a.at).toBeGreaterThanOrEqual(Number(a.retryAfter) * 1000 - 50);
      }
      const impatient = sdk({ publicUrl: s.url }, key, { maxRetries: 0 });
      await impatient.tasks.get(taskId).catch(() => {});
      const e = await impatient.tasks.get(taskId).catch((err: unknown) => err);
      expect(e).toMatchObject({ name: 'RateLimitError', status: 429, retryAfterSeconds: expect.any(Number) });
    } finally {
      await s.close();
    }
  }, 30_000);
});

describe('the SDK is browser-safe', () => {
  it('has no static import of a Node module outside the CLI and the lazily loaded file reader', async () => {
    const dir = new URL('../../packages/client/src/', import.meta.url);
    for (const file of ['index.ts', 'client.ts', 'errors.ts', 'files.ts', 'http.ts', 'models.ts', 'results.ts', 'types.ts', 'webhooks.ts']) {
      // Code only: the doc comments show Node usage (process.env) on purpose.
      const text = (await readFile(new URL(file, dir), 'utf8')).replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
      expect(text, file).not.toMatch(/^import[^;]*from 'node:/m);
      expect(text, file).not.toMatch(/\bBuffer\b|\bprocess\./);
    }
  });
});
