import { randomBytes } from 'node:crypto';
import { readdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';

/** A file the local backend produced. */
export interface RenderedFile {
  path: string;
  mime: string;
  bytes: number;
  width?: number;
  height?: number;
  durationSeconds?: number;
  hasAudio?: boolean;
}

/**
 * Writes through a temporary sibling and renames it into place, so `dst` either does not exist or is complete:
 * a render cache must never serve half a file left by a crash. Returns what `write` returns.
 */
export async function writeAtomically<T>(dst: string, write: (tmp: string) => Promise<T>): Promise<T> {
  const target = path.resolve(dst);
  const tmp = path.join(path.dirname(target), `.${path.basename(target)}.${randomBytes(6).toString('hex')}.part`);
  try {
    const result = await write(tmp);
    await rename(tmp, target);
    return result;
  } catch (e) {
    // A failed clean-up must not hide why the write failed.
    await rm(tmp, { force: true }).catch(() => {});
    throw e;
  }
}

/** Names of files no later run reads: writeAtomically's temporaries and the local backend's garbage outputs. */
const TEMP_NAME = /^(?:\..+\.[0-9a-f]{12}\.part|garbage-[0-9a-f]{12}\.png)$/;

/**
 * Removes scratch files (TEMP_NAME) in `dir` last written more than `olderThanMs` ago: what processes
 * killed mid-render left. Younger ones may belong to a render still running in another process that
 * shares DATA_DIR, so they stay. Returns how many were removed; a missing folder has none.
 */
export async function removeLeftovers(dir: string, olderThanMs: number, now = Date.now()): Promise<number> {
  const names = await readdir(dir).catch(() => [] as string[]);
  let removed = 0;
  for (const name of names) {
    if (!TEMP_NAME.test(name)) continue;
    const file = path.join(dir, name);
    const written = await stat(file).then(
      (s) => (s.isFile() ? s.mtimeMs : null),
      () => null,
    );
    if (written === null || now - written <= olderThanMs) continue;
    await rm(file, { force: true }).then(
      () => removed++,
      () => {},
    );
  }
  return removed;
}
