import { createWriteStream, existsSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { randomId } from '../ids.js';
import type { BlobStore } from '../files/index.js';
import { openDatabase, type Database } from '../store/index.js';

/** What a backup holds, written last as `manifest.json`: a backup without it is incomplete. */
export interface Manifest {
  format: 'gengate-backup';
  version: 1;
  createdAt: string;
  /** The newest migration of the copied database. */
  migration: number;
  accounts: number;
  tasks: number;
  /** `secret.key` is in the backup (the server seals stored secrets with the key file, not GENGATE_SECRET_KEY). */
  keyFile: boolean;
  /** Blob keys of the files copied under `files/` (none when the files live in an S3 bucket). */
  files: string[];
}

/** The names in a backup, under its own name (`at`): a folder, or a prefix in the bucket. */
export const names = (at: string) => ({
  manifest: `${at}/manifest.json`,
  database: `${at}/gengate.db`,
  key: `${at}/secret.key`,
  file: (key: string) => `${at}/files/${key}`,
});

/** A backup's own name: letters, digits, _ and - (it is a folder or a key prefix). */
export const BACKUP_NAME = /^[A-Za-z0-9_-]{1,100}$/;

/** Where a backup is made and what of the server it copies. */
export interface BackupPlan {
  /** The live database (SQLite). */
  database: Database;
  /** Where the backup goes: the folder that holds it (DiskBlobStore) or the bucket (under backups/). */
  place: BlobStore;
  /** Its name there (BACKUP_NAME). */
  at: string;
  /** The server's disk file store, or null when the files are in the bucket (not copied). */
  files: BlobStore | null;
  /** DATA_DIR/secret.key when the server uses it, else null. */
  keyFile: string | null;
  /** A folder for the snapshot while it is made (DATA_DIR/tmp). */
  scratch: string;
  now: Date;
}

/** What a made backup holds, and the files the database named that were gone by the time they were copied (expired meanwhile). */
export interface Made extends Manifest {
  missing: string[];
}

/**
 * Backs up a running SQLite server (decision 2601): `VACUUM INTO` writes a consistent snapshot of
 * the database in one read transaction while writers go on (WAL), through whichever SQLite driver
 * the store runs on; then the files the snapshot names and the key file are copied, and the
 * manifest is written last. Files are copied after the snapshot, so every file it names exists
 * unless it expired in between.
 */
export async function makeBackup(plan: BackupPlan): Promise<Made> {
  if (!plan.database.snapshot)
    throw new Error('gengate backup copies SQLite databases; back up PostgreSQL with pg_dump (docs/operations.md, "Back up and restore")');
  await mkdir(plan.scratch, { recursive: true });
  const snapshot = path.join(plan.scratch, `backup-${randomId('', 8)}.db`);
  try {
    await plan.database.snapshot(snapshot);
    const facts = await readFacts(snapshot);
    const at = names(plan.at);
    await plan.place.putFile(at.database, snapshot);
    const copied: string[] = [];
    const missing: string[] = [];
    if (plan.files) {
      for (const key of facts.blobs) {
        if ((await plan.files.size(key)) === null) {
          missing.push(key);
          continue;
        }
        const tmp = path.join(plan.scratch, `blob-${randomId('', 8)}`);
        try {
          await pipeline(plan.files.read(key), createWriteStream(tmp));
          await plan.place.putFile(at.file(key), tmp, { move: true });
        } finally {
          await rm(tmp, { force: true });
        }
        copied.push(key);
      }
    }
    const keyFile = plan.keyFile !== null && existsSync(plan.keyFile);
    if (keyFile) await plan.place.putFile(at.key, plan.keyFile!);
    const manifest: Manifest = {
      format: 'gengate-backup',
      version: 1,
      createdAt: plan.now.toISOString(),
      migration: facts.migration,
      accounts: facts.accounts,
      tasks: facts.tasks,
      keyFile,
      files: copied,
    };
    await plan.place.putBytes(at.manifest, Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`));
    return { ...manifest, missing };
  } finally {
    await rm(snapshot, { force: true });
  }
}

/** Counts and blob keys of a database file, read from it alone. */
export async function readFacts(file: string): Promise<{ migration: number; accounts: number; tasks: number; blobs: string[] }> {
  const db = openDatabase(`sqlite:${file}`, { guards: false });
  try {
    const count = async (table: 'accounts' | 'tasks') =>
      Number(
        (
          await db.db
            .selectFrom(table)
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );
    const migration = await db.db
      .selectFrom('gengate_migrations')
      .select((eb) => eb.fn.max('version').as('v'))
      .executeTakeFirst();
    const blobs = await db.db.selectFrom('files').select('blob_key').where('deleted_at', 'is', null).orderBy('blob_key').execute();
    return { migration: Number(migration?.v ?? 0), accounts: await count('accounts'), tasks: await count('tasks'), blobs: blobs.map((b) => b.blob_key) };
  } finally {
    await db.close();
  }
}
