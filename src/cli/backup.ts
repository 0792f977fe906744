import path from 'node:path';
import type { Command } from 'commander';
import type { Config } from '../config.js';
import { BACKUP_NAME, makeBackup, restoreBackup } from '../backup/index.js';
import { DiskBlobStore, type BlobStore } from '../files/index.js';
import { KEY_FILE } from '../secrets/index.js';
import { openDatabase } from '../store/index.js';
import { StartError } from '../core.js';

/** The configured file store, loaded on demand (services.ts pulls in the whole server). */
const blobStore = async (config: Config, prefix?: string) => (await import('../services.js')).blobStore(config, prefix ?? config.S3_PREFIX);

/** Where a backup is: a folder path, or `s3:` / `s3:<name>` for the bucket's `backups/` prefix. */
interface Place {
  store: BlobStore;
  at: string;
  shown: string;
}

/** A backup's default name: gengate-2026-12-02T10-15-00Z. */
const stamp = (now: Date) =>
  `gengate-${now
    .toISOString()
    .replace(/\.\d+Z$/, 'Z')
    .replaceAll(':', '-')}`;

async function placeOf(config: Config, target: string | undefined, now: Date): Promise<Place> {
  if (target?.startsWith('s3:')) {
    if (!config.S3_BUCKET) throw new StartError('s3: backups go to the bucket of S3_BUCKET, which is not set');
    const at = target.slice(3) || stamp(now);
    if (!BACKUP_NAME.test(at)) throw new StartError(`the backup's name must be letters, digits, _ and - (got ${JSON.stringify(at)})`);
    const prefix = `${config.S3_PREFIX ?? ''}backups/`;
    return { store: await blobStore(config, prefix), at, shown: `s3://${config.S3_BUCKET}/${prefix}${at}/` };
  }
  const full = path.resolve(target ?? path.join(config.DATA_DIR, 'backups', stamp(now)));
  const at = path.basename(full);
  if (!BACKUP_NAME.test(at)) throw new StartError(`the backup folder's own name must be letters, digits, _ and - (got ${JSON.stringify(at)})`);
  return { store: new DiskBlobStore(path.dirname(full)), at, shown: full };
}

/** The SQLite file of DATABASE_URL; PostgreSQL has its own tools (the message says which). */
function sqliteFile(config: Config, what: 'backup' | 'restore'): string {
  if (config.DATABASE_URL.startsWith('sqlite:')) return path.resolve(config.DATABASE_URL.slice('sqlite:'.length));
  throw new StartError(
    what === 'backup'
      ? 'DATABASE_URL is PostgreSQL: back it up with pg_dump (or continuous archiving for point-in-time recovery), see docs/operations.md "Back up and restore"'
      : 'DATABASE_URL is PostgreSQL: restore it with pg_restore, see docs/operations.md "Back up and restore"',
  );
}

/** A failure of the copy itself is said in one line, like any start error (no stack). */
const plainly = (what: string, fn: () => Promise<void>) => async () =>
  fn().catch((e: unknown) => {
    throw e instanceof Error && !(e instanceof StartError) && e.constructor === Error ? new StartError(`${what}: ${e.message}`) : e;
  });

/** `gengate backup [target]` and `gengate restore <source>` (decision 2601). */
export function addBackupCommands(program: Command, config: () => Config, act: (fn: () => Promise<void>) => Promise<void>, out: (text: string) => void): void {
  program
    .command('backup [target]')
    .description(
      'copy a running SQLite server (database, files, key file) to a folder (default DATA_DIR/backups/gengate-<time>) or to the bucket (s3: or s3:<name>)',
    )
    .action((target?: string) =>
      act(
        plainly('backup', async () => {
          const c = config();
          sqliteFile(c, 'backup');
          const now = new Date();
          const place = await placeOf(c, target, now);
          const database = openDatabase(c.DATABASE_URL, { guards: false });
          try {
            const made = await makeBackup({
              database,
              place: place.store,
              at: place.at,
              files: c.S3_BUCKET ? null : new DiskBlobStore(path.join(c.DATA_DIR, 'files')),
              keyFile: c.GENGATE_SECRET_KEY ? null : path.join(c.DATA_DIR, KEY_FILE),
              scratch: path.join(c.DATA_DIR, 'tmp'),
              now,
            });
            out(
              `backup ${place.shown}: ${made.accounts} accounts, ${made.tasks} tasks, ${made.files.length} files${c.S3_BUCKET ? ' (the files stay in the bucket)' : ''}, migration ${made.migration}` +
                `${made.keyFile ? ', secret.key' : c.GENGATE_SECRET_KEY ? '; GENGATE_SECRET_KEY is not in the backup: keep it safe apart' : ''}` +
                `${made.missing.length ? `; ${made.missing.length} files expired while copying` : ''}`,
            );
          } finally {
            await database.close();
            place.store.close();
          }
        }),
      ),
    );
  program
    .command('restore <source>')
    .description('restore a backup (a folder, or s3:<name>) into this DATA_DIR; the server must be stopped')
    .option('--force', 'replace the database that is there')
    .action((source: string, opts: { force?: boolean }) =>
      act(
        plainly('restore', async () => {
          const c = config();
          const file = sqliteFile(c, 'restore');
          const place = await placeOf(c, source, new Date());
          const files = await blobStore(c);
          try {
            const m = await restoreBackup({
              place: place.store,
              at: place.at,
              databaseFile: file,
              keyFile: path.join(c.DATA_DIR, KEY_FILE),
              files,
              force: opts.force === true,
            });
            out(
              `restored ${place.shown} (made ${m.createdAt}): ${m.accounts} accounts, ${m.tasks} tasks, ${m.files.length} files, migration ${m.migration}; start the server to apply newer migrations`,
            );
          } finally {
            place.store.close();
            files.close();
          }
        }),
      ),
    );
}
