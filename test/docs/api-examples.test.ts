import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';
import { makeClip, makeStill, makeTone } from '../media/helpers.js';
import { FAST, settle, resultUrls } from '../tasks/support.js';

/**
 * Runs every curl example of docs/api.md and docs/operations.md against a live server, in document
 * order, so the examples cannot rot. Placeholders (documented at the top of docs/api.md): the base
 * address http://127.0.0.1:8080, $GENGATE_KEY, $ADMIN_TOKEN, and the example task and file ids,
 * which stand for the task the createTask example creates ($FILE_URL: its file's link as the server wrote it; and the Suno task id for the one the
 * /generate example creates), and the example account and key ids (and a key $GENGATE_KEY made); upload examples find photo.jpg, clip.mov, clip.mp4 and song.mp3 in the current folder. A JSON block right after an example is
 * its documented answer: every key it shows must be in the real answer.
 * The cancel example's task id
 * stands for a task created for it and kept waiting (the engine here finishes tasks at once).
 */

const run = promisify(execFile);
const BASE = 'http://127.0.0.1:8080';
const EXAMPLE_TASK = 'tk_3q2Yc9fK0vQmY1b6M8n3Dg';
const EXAMPLE_FILE = 'MtN_qNg1qEro-dxG5_WJPQ/video.mp4';
/** The task the kie.ai Suno `/generate` example creates (its record-info example reads it). */
const EXAMPLE_SUNO_TASK = 'tk_7Hq2Lm9Xc4Rt0Yp1Ws8Vb3';
/** The account of $GENGATE_KEY, and another key of it, in the admin examples. */
const EXAMPLE_ACCOUNT = 'acc_Q7mN2pX4r';
const EXAMPLE_KEY = 'key_W3kT9vB6h';
/** A key $GENGATE_KEY made (decision 1907): the customer key examples change and revoke it. */
const EXAMPLE_OWN_KEY = 'key_R8dM4sJ2q';
const EXAMPLE_CANCEL = 'tk_Wq7cN2xPz4RbT0sYh6Ld1A';
/** Prepended to each example: curl reports the status of every answer after it. */
const PRELUDE = `curl() { command curl -sS -w '\\n@@status %{http_code}\\n' "$@"; }\n`;

interface Example {
  file: string;
  line: number;
  script: string;
  answer: unknown;
}

/** The `sh` blocks made only of curl commands, each with the JSON block that follows it (if any). */
function examples(file: string): Example[] {
  const text = readFileSync(path.join('docs', file), 'utf8');
  const blocks = [...text.matchAll(/```(\w+)\n([\s\S]*?)```/g)];
  const out: Example[] = [];
  blocks.forEach((b, i) => {
    if (b[1] !== 'sh') return;
    // Commands start at column 0; their continuation lines are indented.
    const commands = b[2]!.split('\n').filter((l) => l.trim() && !/^\s/.test(l));
    if (commands.length === 0 || !commands.every((c) => c.startsWith('curl '))) return;
    const next = blocks[i + 1];
    const between = next ? text.slice(b.index! + b[0].length, next.index) : '';
    let answer: unknown;
    if (next && next[1] === 'json' && between.trim() === '') answer = JSON.parse(next[2]!);
    out.push({ file, line: text.slice(0, b.index).split('\n').length, script: b[2]!, answer });
  });
  return out;
}

/** Where the documented answer shows a key ("..." stands for more) the real one lacks; null when none. */
function missingKey(real: unknown, doc: unknown, where: string): string | null {
  if (Array.isArray(doc)) {
    if (!Array.isArray(real)) return `${where} is not an array`;
    // A documented element stands for one of the real ones (the docs show a representative model, not the first).
    for (const [i, d] of doc.entries()) {
      if (d === '...' || real.length === 0) continue;
      const misses = real.map((r) => missingKey(r, d, `${where}[${i}]`));
      if (!misses.includes(null)) return misses[0]!;
    }
    return null;
  }
  if (doc && typeof doc === 'object') {
    if (!real || typeof real !== 'object') return `${where} is not an object`;
    for (const [k, v] of Object.entries(doc)) {
      if (k === '...') continue;
      if (!Object.hasOwn(real, k)) return `${where}.${k}`;
      const miss = missingKey((real as Record<string, unknown>)[k], v, `${where}.${k}`);
      if (miss) return miss;
    }
  }
  return null;
}

describe('curl examples of the docs run against a live server', () => {
  let s: TestServer;
  let dir: string;
  const env: Record<string, string> = {};
  const ids: Record<string, string> = {};
  beforeAll(async () => {
    env.ADMIN_TOKEN = 'admin-token-for-docs-0123';
    // ALLOW_PRIVATE_NETWORK: the file-url-upload example fetches a file of this server (127.0.0.1).
    s = await startServer('sqlite', { ...FAST, ADMIN_TOKEN: env.ADMIN_TOKEN, ALLOW_PRIVATE_NETWORK: 'true' });
    s.services.engine.start();
    const account = await s.account(10);
    env.GENGATE_KEY = account.key;
    ids[EXAMPLE_ACCOUNT] = account.id;
    const [first] = await s.services.accounts.listKeys(account.id);
    ids[EXAMPLE_KEY] = (await s.services.accounts.createKey(account.id, { name: 'docs' })).key.id;
    const byKey = { kind: 'key' as const, accountId: account.id, keyId: first!.id };
    ids[EXAMPLE_OWN_KEY] = (await s.services.accounts.createKey(account.id, { name: 'nightly job' }, byKey)).key.id;
    dir = mkdtempSync(path.join(tmpdir(), 'gengate-docs-'));
    // Upload examples send these files from the current folder (docs/api.md says which exist).
    await makeStill(path.join(dir, 'photo.jpg'));
    await makeClip(path.join(dir, 'clip.mov'), { seconds: 3 });
    await makeClip(path.join(dir, 'clip.mp4'), { seconds: 3 });
    await makeTone(path.join(dir, 'song.mp3'), 3);
  });
  afterAll(async () => {
    await s.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A task of the example key that the engine leaves alone (its turn is an hour away), for the cancel example. */
  async function waitingTask(): Promise<string> {
    const r = await s.call('POST', '/api/v1/jobs/createTask', { key: env.GENGATE_KEY!, body: { model: 'seedream-flash', input: { prompt: 'a kite' } } });
    const taskId = r.body.data.taskId as string;
    await s.services.database.tx((w) =>
      w
        .updateTable('tasks')
        .set({ run_at: Date.now() + 3_600_000 })
        .where('id', '=', taskId)
        .execute(),
    );
    return taskId;
  }

  const all = [...examples('api.md'), ...examples('operations.md')];
  it('finds the examples', () => {
    expect(all.length).toBeGreaterThanOrEqual(12);
  });

  for (const ex of all) {
    it(`${ex.file}:${ex.line} ${ex.script.split('\n')[0]!.slice(0, 70)}`, async () => {
      if (ex.script.includes(EXAMPLE_CANCEL)) ids[EXAMPLE_CANCEL] = await waitingTask();
      let script = ex.script.replaceAll(BASE, s.url);
      for (const [example, real] of Object.entries(ids)) script = script.replaceAll(example, real);
      const { stdout } = await run('sh', ['-c', PRELUDE + script], { cwd: dir, env: { PATH: process.env.PATH!, ...env }, maxBuffer: 1 << 24 });
      const answers = stdout.split(/\n@@status (\d{3})\n/);
      const statuses = answers.filter((_, i) => i % 2 === 1).map(Number);
      expect(statuses.length, stdout).toBeGreaterThan(0);
      for (const status of statuses) expect(status, stdout.slice(0, 500)).toBeLessThan(300);
      const body = answers[0]!.includes('\r\n\r\n') ? answers[0]!.split('\r\n\r\n').pop()! : answers[0]!;
      if (ex.answer !== undefined) expect(missingKey(JSON.parse(body), ex.answer, 'answer'), 'documented key missing from the real answer').toBeNull();
      if (script.includes('/jobs/createTask')) {
        // Later examples read this task and its file in place of the example ids.
        const taskId = JSON.parse(body).data.taskId as string;
        const task = await settle(s, env.GENGATE_KEY!, taskId, 60_000);
        expect(task.state).toBe('success');
        ids[EXAMPLE_TASK] = taskId;
        ids[EXAMPLE_FILE] = new URL(resultUrls(task)[0]!).pathname.replace('/files/', '');
        env.FILE_URL = resultUrls(task)[0]!; // as the server wrote it (PUBLIC_BASE_URL), for download-url
      }
      if (/-X POST\b[\s\S]*\/api\/v1\/generate\b/.test(script)) {
        // The Suno record-info example reads this task, finished, in place of the example id.
        const taskId = JSON.parse(body).data.taskId as string;
        expect((await settle(s, env.GENGATE_KEY!, taskId, 60_000)).state).toBe('success');
        ids[EXAMPLE_SUNO_TASK] = taskId;
      }
    }, 240_000);
  }
});
