import { randomBytes } from 'node:crypto';
import { rename, rm } from 'node:fs/promises';
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
    await rm(tmp, { force: true });
    throw e;
  }
}
