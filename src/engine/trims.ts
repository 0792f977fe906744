import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { MediaFact } from '../catalog/index.js';
import { UPLOAD_RETENTION_MS, type StoredFile } from '../files/index.js';
import { MediaError, trim, typeOf, type SniffedFormat } from '../media/index.js';
import type { EngineDeps, TaskWork } from './deps.js';

const CLIP_FIELDS = ['video_urls', 'audio_urls'] as const;

interface Cut {
  field: (typeof CLIP_FIELDS)[number];
  index: number;
  url: string;
  keep: number;
  row: { id: string; name: string; blob_key: string; format: string | null; kind: string | null };
}

/**
 * The trim plan applied (DECISIONS §11): a supplied clip whose stored length is longer than the
 * seconds the price counted is cut with ffmpeg to those seconds, stored as a new upload of the
 * account, and the task's input and media facts point at it — before any backend sees the task.
 * Returns the task as it now is. Idempotent: the new file's seconds equal the planned ones.
 */
export async function applyTrims(deps: EngineDeps, task: TaskWork): Promise<TaskWork> {
  if (!task.media) return task;
  const input = JSON.parse(task.input) as Record<string, unknown>;
  const media = JSON.parse(task.media) as Record<string, MediaFact>;
  const cuts = await plannedCuts(deps, task, input, media);
  if (cuts.length === 0) return task;
  const scratch = await mkdtemp(path.join(tmpdir(), 'gengate-trim-'));
  const saved: StoredFile[] = [];
  try {
    const rows: Parameters<EngineDeps['files']['record']>[1] = [];
    for (const cut of cuts) {
      const format = (cut.row.format ?? 'mp4') as SniffedFormat;
      const src = path.join(scratch, `${cut.field}-${cut.index}-in`);
      await pipeline(deps.files.blobs.read(cut.row.blob_key), createWriteStream(src));
      // Video is re-encoded to MP4 for an exact cut; MP3 and WAV keep their container.
      const out = typeOf(cut.row.kind === 'video' ? 'mp4' : format);
      const dst = path.join(scratch, `${cut.field}-${cut.index}.${out.ext}`);
      // trim refuses a clip over the video limits before decoding it (decision 0302); its own message names scratch paths.
      await trim(src, dst, cut.keep).catch((e: unknown) => {
        throw e instanceof MediaError && e.reason === 'too_large' ? new Error(`input.${cut.field}[${cut.index}]: ${e.detail}`) : e;
      });
      const stored = await deps.files.save(dst, cut.row.name.replace(/\.[^.]*$/, `.${out.ext}`), out.mime, { move: true });
      saved.push(stored);
      const link = deps.files.url(stored.id, stored.name);
      const list = input[cut.field] as string[];
      list[cut.index] = link;
      const fact: MediaFact = { ...media[cut.url], format: out.format, seconds: cut.keep };
      media[link] = fact;
      rows.push({
        ...stored,
        account_id: task.account_id,
        task_id: task.id,
        purpose: 'upload' as const,
        kind: cut.row.kind as 'video' | 'audio',
        format: out.format,
        seconds: cut.keep,
        expires_at: deps.clock.now() + UPLOAD_RETENTION_MS,
      });
    }
    for (const cut of cuts) if (!stillUsed(input, cut.url)) delete media[cut.url];
    const updated = { ...task, input: JSON.stringify(input), media: JSON.stringify(media) };
    const held = await deps.database.tx(async (trx) => {
      const res = await trx
        .updateTable('tasks')
        .set({ input: updated.input, media: updated.media, updated_at: deps.clock.now() })
        .where('id', '=', task.id)
        .where('state', '=', 'waiting')
        .where('locked_by', '=', task.lease)
        .executeTakeFirst();
      if (Number(res.numUpdatedRows) !== 1) return false;
      await deps.files.record(trx, rows);
      await trx
        .insertInto('task_events')
        .values({
          task_id: task.id,
          from_state: 'waiting',
          to_state: 'waiting',
          detail: `trimmed ${cuts.map((c) => `input.${c.field}[${c.index}] to ${c.keep} s`).join(', ')}`,
          at: deps.clock.now(),
        })
        .execute();
      return true;
    });
    if (!held) throw new Error(`task ${task.id} changed hands while its clips were trimmed`);
    return updated;
  } catch (e) {
    await Promise.all(saved.map((f) => deps.files.blobs.delete(f.blobKey)));
    throw e;
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

function stillUsed(input: Record<string, unknown>, url: string): boolean {
  return CLIP_FIELDS.some((f) => Array.isArray(input[f]) && (input[f] as unknown[]).includes(url));
}

/** Clips of the input whose stored upload is longer than the seconds in the task's facts. */
async function plannedCuts(deps: EngineDeps, task: TaskWork, input: Record<string, unknown>, media: Record<string, MediaFact>): Promise<Cut[]> {
  const wanted: Array<Omit<Cut, 'row'> & { id: string }> = [];
  for (const field of CLIP_FIELDS) {
    const list = input[field];
    if (!Array.isArray(list)) continue;
    list.forEach((url, index) => {
      const keep = typeof url === 'string' && Object.hasOwn(media, url) ? media[url]?.seconds : undefined;
      const id = typeof url === 'string' && keep !== undefined ? deps.files.linkId(url) : null;
      if (id && keep !== undefined) wanted.push({ field, index, url, keep, id });
    });
  }
  if (wanted.length === 0) return [];
  const rows = await deps.database.db
    .selectFrom('files')
    .select(['id', 'name', 'blob_key', 'format', 'kind', 'seconds'])
    .where(
      'id',
      'in',
      wanted.map((w) => w.id),
    )
    .where('account_id', '=', task.account_id)
    .where('deleted_at', 'is', null)
    .execute();
  const byId = new Map(rows.map((r) => [r.id, r]));
  const cuts: Cut[] = [];
  for (const w of wanted) {
    const row = byId.get(w.id);
    // A link whose file is gone is left as it is: the backend reports it like any unreadable link.
    if (row && row.seconds !== null && Number(row.seconds) > w.keep) cuts.push({ field: w.field, index: w.index, url: w.url, keep: w.keep, row });
  }
  return cuts;
}
