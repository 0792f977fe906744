import { createWriteStream, existsSync } from 'node:fs';
import { chmod, mkdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { Readable } from 'node:stream';
import { randomId } from '../ids.js';
import type { BlobStore } from '../files/index.js';
import { names, readFacts, type Manifest } from './backup.js';

/** Where a backup is restored to. */
export interface RestorePlan {
  /** Where the backup is: the folder that holds it (DiskBlobStore) or the bucket (under backups/). */
  place: BlobStore;
  /** Its name there. */
  at: string;
  /** The SQLite file DATABASE_URL names. */
  databaseFile: string;
  /** Where `secret.key` goes (DATA_DIR/secret.key). */
  keyFile: string;
  /** The file store the files go to (the disk store, or the bucket). */
  files: BlobStore;
  /** Replace a database that is already there (the server must be stopped). */
  force: boolean;
}

/** Reads a whole blob. */
async function bytesOf(stream: Readable): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const part of stream) parts.push(part as Buffer);
  return Buffer.concat(parts);
}

/** Copies one blob of the backup to a local file. */
async function fetchTo(place: BlobStore, key: string, file: string): Promise<void> {
  await pipeline(place.read(key), createWriteStream(file));
}

/**
 * Restores a backup made by makeBackup into a stopped server's data folder (decision 2601): the
 * manifest first (no manifest, no restore), then the database under a temporary name renamed into
 * place (its old -wal and -shm removed), the key file, and the files. The restored database's
 * counts are checked against the manifest.
 */
export async function restoreBackup(plan: RestorePlan): Promise<Manifest> {
  const at = names(plan.at);
  if ((await plan.place.size(at.manifest)) === null)
    throw new Error(`no backup ${plan.at} there: its manifest.json is missing (an unfinished backup has none)`);
  const manifest = JSON.parse((await bytesOf(plan.place.read(at.manifest))).toString('utf8')) as Manifest;
  if (manifest.format !== 'gengate-backup' || manifest.version !== 1) throw new Error(`${at.manifest} is not a GenGate backup of a version this release reads`);
  if (existsSync(plan.databaseFile) && !plan.force) {
    throw new Error(`a database is already at ${plan.databaseFile}: stop the server and add --force to replace it, or restore into an empty DATA_DIR`);
  }
  await mkdir(path.dirname(plan.databaseFile), { recursive: true });
  const incoming = `${plan.databaseFile}.restoring-${randomId('', 6)}`;
  try {
    await fetchTo(plan.place, at.database, incoming);
    const facts = await readFacts(incoming);
    if (facts.tasks !== manifest.tasks || facts.accounts !== manifest.accounts) {
      throw new Error(
        `the backup's database does not match its manifest (${facts.tasks} tasks, ${facts.accounts} accounts; manifest: ${manifest.tasks}, ${manifest.accounts})`,
      );
    }
    for (const suffix of ['-wal', '-shm']) await rm(plan.databaseFile + suffix, { force: true });
    await rename(incoming, plan.databaseFile);
  } finally {
    await rm(incoming, { force: true });
    for (const suffix of ['-wal', '-shm']) await rm(incoming + suffix, { force: true });
  }
  if (manifest.keyFile) {
    await fetchTo(plan.place, at.key, plan.keyFile);
    await chmod(plan.keyFile, 0o600);
  }
  const scratch = path.join(path.dirname(plan.databaseFile), 'tmp');
  await mkdir(scratch, { recursive: true });
  for (const key of manifest.files) {
    const tmp = path.join(scratch, `restore-${randomId('', 8)}`);
    try {
      await fetchTo(plan.place, at.file(key), tmp);
      await plan.files.putFile(key, tmp, { move: true });
    } finally {
      await rm(tmp, { force: true });
    }
  }
  return manifest;
}
