import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { BackendFailure, type BackendJob, type BackendOutput, type OutputFile } from '../backends/index.js';
import { OUTPUT_OF_KIND } from '../catalog/index.js';
import { settleAutoLength } from '../pricing/index.js';
import { lastFrame, probe, sniffFile } from '../media/index.js';
import type { StoredFile } from '../files/index.js';
import { FILE_RETENTION_MS, callbackDueThen } from '../tasks/index.js';
import type { StoredResult } from '../tasks/index.js';
import type { EngineDeps, TaskWork } from './deps.js';
import { failTask, finishedSignals } from './fail.js';
import { moveHeld } from './lease.js';

/** A checked output file: its sniffed type decides the stored name and Content-Type (never the backend's word). */
interface Checked {
  path: string;
  mime: string;
  ext: string;
}

async function check(file: OutputFile, want: 'image' | 'video' | 'audio', what: string): Promise<Checked> {
  const size = await stat(file.path).then(
    (s) => s.size,
    () => 0,
  );
  if (size === 0) throw new BackendFailure('internal', `the backend returned an unusable result: ${what} is missing or empty`);
  const sniffed = await sniffFile(file.path);
  if (!sniffed || sniffed.kind !== want) {
    throw new BackendFailure('internal', `the backend returned an unusable result: ${what} is not ${want === 'image' ? 'an' : 'a'} ${want} file`);
  }
  return { path: file.path, mime: sniffed.mime, ext: sniffed.ext };
}

/** Checks a backend's output against the model: count and kind of files, real media bytes. */
async function checkOutput(job: BackendJob, out: BackendOutput): Promise<{ files: Checked[]; frame: Checked | null }> {
  const want = OUTPUT_OF_KIND[job.kind].media;
  const count = OUTPUT_OF_KIND[job.kind].files;
  if (!out || !Array.isArray(out.files) || out.files.length !== count) {
    throw new BackendFailure(
      'internal',
      `the backend returned an unusable result: expected ${count} file(s), got ${Array.isArray(out?.files) ? out.files.length : 'none'}`,
    );
  }
  const files = await Promise.all(out.files.map((f, i) => check(f, want, `file ${i + 1}`)));
  const frame = out.lastFrame ? await check(out.lastFrame, 'image', 'the last frame') : null;
  return { files, frame };
}

function names(job: BackendJob, files: Checked[]): string[] {
  if (files.length > 1) return files.map((f, i) => `track-${i + 1}.${f.ext}`);
  return files.map((f) => `${job.kind}.${f.ext}`);
}

/**
 * Turns a done job into a successful task: checks the files, re-hosts them in the blob store,
 * extracts a last frame if one was asked for and not given (DECISIONS §7), settles an automatic
 * length, and commits the success, the file rows, the partial refund and the callback row together
 * (on PostgreSQL without a partial refund: in one statement, one round trip).
 */
export async function finishTask(deps: EngineDeps, task: TaskWork, job: BackendJob, out: BackendOutput): Promise<boolean> {
  const { files, frame: given } = await checkOutput(job, out);
  let duration: number | undefined;
  if (job.kind === 'video') duration = (await probe(files[0]!.path)).durationSeconds ?? out.durationSeconds;
  let scratch: string | null = null;
  let frame = given;
  try {
    if (job.kind === 'video' && job.input.return_last_frame === true && !frame) {
      scratch = await mkdtemp(path.join(tmpdir(), 'gengate-frame-'));
      const png = path.join(scratch, 'last-frame.png');
      await lastFrame(files[0]!.path, png);
      frame = { path: png, mime: 'image/png', ext: 'png' };
    }
    const fileNames = names(job, files);
    const saved: StoredFile[] = [];
    for (const [i, f] of files.entries()) saved.push(await deps.files.save(f.path, fileNames[i]!, f.mime));
    const savedFrame = frame ? await deps.files.save(frame.path, `last-frame.${frame.ext}`, frame.mime) : null;
    const all = savedFrame ? [...saved, savedFrame] : saved;
    const committed = await commit(deps, task, job, all, saved, savedFrame, duration).catch(async (e: unknown) => {
      await Promise.all(all.map((f) => deps.files.blobs.delete(f.blobKey)));
      throw e;
    });
    if (!committed) await Promise.all(all.map((f) => deps.files.blobs.delete(f.blobKey)));
    return committed;
  } finally {
    if (scratch) await rm(scratch, { recursive: true, force: true });
  }
}

async function commit(
  deps: EngineDeps,
  task: TaskWork,
  job: BackendJob,
  all: StoredFile[],
  saved: StoredFile[],
  frame: StoredFile | null,
  duration: number | undefined,
): Promise<boolean> {
  const now = deps.clock.now();
  // Work that ends after the deadline is a timeout, whatever the backend says (SPEC: 20 minutes).
  if (now >= Number(task.deadline_at)) {
    await failTask(deps, task, 'timeout', 'the task did not finish within 20 minutes');
    return false;
  }
  const result: StoredResult = {
    kind: job.kind,
    files: saved.map((f) => ({ id: f.id, name: f.name })),
    ...(duration !== undefined ? { duration: Math.round(duration * 1000) / 1000 } : {}),
    ...(frame ? { lastFrame: { id: frame.id, name: frame.name } } : {}),
  };
  let finalMicros = Number(task.price_micros);
  if (Number(task.auto_length) === 1 && duration !== undefined) {
    // Never above the charge: the definition may have been edited to a higher rate since the task was
    // created (decision 3304), and a settlement is a refund of the unused part, never a second charge.
    finalMicros = Math.min(finalMicros, settleAutoLength(deps.catalog, task.model, job.input, job.media, duration).priceMicros);
  }
  const expiresAt = now + FILE_RETENTION_MS;
  const unused = Number(task.price_micros) - finalMicros;
  const rows = deps.files.rows(
    all.map((f) => ({
      ...f,
      account_id: task.account_id,
      task_id: task.id,
      purpose: 'result' as const,
      kind: f === frame ? ('image' as const) : OUTPUT_OF_KIND[job.kind].media,
      format: null,
      seconds: null,
      expires_at: expiresAt,
    })),
  );
  // The move, its event, the file rows and the callback row: one statement on PostgreSQL (moveHeld's
  // `then`), atomic without a transaction unless a partial refund follows it.
  const moved = await deps.database.tx(
    async (trx) => {
      const ok = await moveHeld(
        trx,
        task,
        'success',
        now,
        {
          progress: 100,
          result: JSON.stringify(result),
          real_seconds: duration ?? null,
          completed_at: now,
          files_expire_at: expiresAt,
          final_micros: finalMicros,
          last_error: null,
        },
        `${all.length} file(s)`,
        [{ insert: 'files', rows }, ...callbackDueThen(task, now)],
      );
      if (!ok) return false;
      if (unused > 0) await deps.ledger.refund(trx, task.id, 'partial_refund', `task ${task.id}: unused video seconds (real length ${duration} s)`, unused);
      return true;
    },
    { atomic: unused > 0 || deps.database.dialect !== 'postgres' },
  );
  if (moved) finishedSignals(deps, task);
  return moved;
}
