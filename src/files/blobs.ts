import { createReadStream } from 'node:fs';
import { copyFile, constants, link, mkdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import type { Readable } from 'node:stream';

/** What a presigned link of a stored file carries. */
export interface SignedLinkOptions {
  expiresInSeconds: number;
  fileName: string;
  mime: string;
}

/** Where stored file bytes live; chosen in buildServices (disk, or S3 when S3_BUCKET is set). Keys are plain relative names. */
export interface BlobStore {
  /**
   * Stores the bytes of the local file `src` under `key`; with `move` the file may be taken over. The
   * store may share `src`'s bytes (a hard link) rather than copy them: callers never change a file
   * in place after handing it over (renders and downloads are written to a new name, then renamed).
   */
  putFile(key: string, src: string, opts?: { move?: boolean }): Promise<void>;
  putBytes(key: string, bytes: Buffer): Promise<void>;
  /** A stream of the bytes [start, end] (inclusive), or of all of them. */
  read(key: string, range?: { start: number; end: number }): Readable;
  /** Size in bytes, or null when the blob does not exist. */
  size(key: string): Promise<number | null>;
  /** Deletes the blob; deleting a missing blob is not an error. */
  delete(key: string): Promise<void>;
  /** A time-limited direct link to the blob (FILE_LINKS=presigned); only stores that can sign have it. */
  signedLink?(key: string, opts: SignedLinkOptions): Promise<string>;
  /** Throws when the store cannot be used (readiness check); without it the check looks up a missing blob. */
  ping?(): Promise<void>;
  /** Releases connections (nothing to release for the disk store). */
  close(): void;
}

/** Whether `to` could be made a hard link of `from`. */
const linked = (from: string, to: string) =>
  link(from, to).then(
    () => true,
    () => false,
  );

const SAFE_KEY = /^[A-Za-z0-9_-]+(\/[A-Za-z0-9._-]+)*$/;

/** Blobs as files under one folder; every key is checked so no path can leave it. */
export class DiskBlobStore implements BlobStore {
  private readonly root: string;
  /**
   * Sources that reached the file system's limit of hard links (EMLINK: 65,000 on ext4, so after
   * that many results of one cached render) mapped to the blob last copied from them: later puts
   * link to that copy, so each 65,000 results cost one copy of the bytes, not one each.
   */
  private readonly relinked = new Map<string, string>();

  constructor(root: string) {
    this.root = path.resolve(root);
  }

  private file(key: string): string {
    if (!SAFE_KEY.test(key) || key.split('/').some((p) => p === '.' || p === '..')) throw new Error(`bad blob key ${JSON.stringify(key)}`);
    const full = path.resolve(this.root, key);
    if (!full.startsWith(this.root + path.sep)) throw new Error(`blob key ${JSON.stringify(key)} leaves the blob folder`);
    return full;
  }

  async putFile(key: string, src: string, opts: { move?: boolean } = {}): Promise<void> {
    // A move within one file system is a rename: a 200 MB upload is written to disk once, not twice.
    const dst = this.file(key);
    const moved = opts.move
      ? await mkdir(path.dirname(dst), { recursive: true })
          .then(() => rename(src, dst))
          .then(
            () => true,
            () => false,
          )
      : false;
    // Otherwise a hard link (no bytes copied: a cached render becomes a result at no cost), and a
    // copy where links are not possible (another file system, or a file system without them).
    if (!moved) await this.linkOrCopy(src, dst, key);
  }

  private async linkOrCopy(src: string, dst: string, key: string): Promise<void> {
    const copy = this.relinked.get(src);
    let full = false;
    await this.write(key, async (tmp) => {
      // The copy made when `src` was full of links, unless it is gone (its blob deleted, or full in turn).
      if (copy && (await linked(copy, tmp))) return;
      try {
        await link(src, tmp);
      } catch (e) {
        full = (e as NodeJS.ErrnoException).code === 'EMLINK';
        await copyFile(src, tmp, constants.COPYFILE_FICLONE);
      }
    });
    if (full) this.relinked.set(src, dst);
  }

  async putBytes(key: string, bytes: Buffer): Promise<void> {
    await this.write(key, (tmp) => writeFile(tmp, bytes));
  }

  read(key: string, range?: { start: number; end: number }): Readable {
    return createReadStream(this.file(key), range ? { start: range.start, end: range.end } : {});
  }

  /** Nothing to release: every read and write opens and closes its own file. */
  close(): void {}

  async size(key: string): Promise<number | null> {
    return stat(this.file(key)).then(
      (s) => s.size,
      () => null,
    );
  }

  async delete(key: string): Promise<void> {
    await rm(this.file(key), { force: true });
  }

  /** Writes through a temporary sibling and renames, so a crash never leaves half a blob under its key. */
  private async write(key: string, fill: (tmp: string) => Promise<void>): Promise<void> {
    const dst = this.file(key);
    await mkdir(path.dirname(dst), { recursive: true });
    const tmp = `${dst}.${randomBytes(6).toString('hex')}.part`;
    try {
      await fill(tmp);
      await rename(tmp, dst);
    } catch (e) {
      await rm(tmp, { force: true });
      throw e;
    }
  }
}
