import { randomBytes } from 'node:crypto';
import type { Insertable, Kysely } from 'kysely';
import type { Clock } from '../clock.js';
import type { Database } from '../store/index.js';
import type { DB, FilesTable } from '../store/index.js';
import { precompile } from '../store/index.js';
import type { BlobStore } from './blobs.js';

/** A file whose bytes are in the blob store, ready to be recorded with the change it belongs to. */
export interface StoredFile {
  id: string;
  name: string;
  mime: string;
  bytes: number;
  blobKey: string;
}

/** A saved file with what its row records: whose it is and until when. */
export type Recorded = StoredFile & Pick<FilesTable, 'account_id' | 'task_id' | 'purpose' | 'kind' | 'format' | 'seconds' | 'expires_at'>;

/** What GET /files/<id>/<name> needs to answer. */
export interface OpenFile {
  mime: string;
  bytes: number;
  blobKey: string;
  /** When the link stops working (ms since epoch). */
  expiresAt: number;
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** Seals and opens the tokens of download links (the secret box: every process has the same key). */
export interface TokenSealer {
  sealToken(plain: string): string;
  openToken(token: string): string | null;
}

/** Why a link given to POST /common/download-url has no download link. */
export type OwnedRefusal = 'foreign' | 'unknown';

/**
 * Result and upload files (DECISIONS §9): bytes in the blob store under a random 128-bit id, a
 * row in `files` with the expiry, links `{PUBLIC_BASE_URL}/files/<id>/<name>` that 404 once expired.
 */
export class Files {
  private readonly findOpen;

  constructor(
    private readonly database: Database,
    readonly blobs: BlobStore,
    private readonly clock: Clock,
    private readonly publicBaseUrl: string,
    /** Needed for download links (`downloadLink`, `openDownload`) only. */
    private readonly sealer?: TokenSealer,
  ) {
    const { db } = database;
    this.findOpen = precompile(db, 2, (id, name) =>
      db.selectFrom('files').select(['mime', 'bytes', 'blob_key', 'expires_at', 'deleted_at']).where('id', '=', id).where('name', '=', name),
    );
  }

  /** Copies (or with `move`, takes over) a local file into the blob store under a fresh id; the caller records it with `record` in its transaction. */
  async save(src: string, name: string, mime: string, opts: { move?: boolean } = {}): Promise<StoredFile> {
    if (!NAME.test(name)) throw new Error(`bad file name ${JSON.stringify(name)}`);
    const id = randomBytes(16).toString('base64url');
    const blobKey = `${id.slice(0, 2)}/${id}`;
    await this.blobs.putFile(blobKey, src, opts);
    const bytes = (await this.blobs.size(blobKey)) ?? 0;
    return { id, name, mime, bytes, blobKey };
  }

  /** Inserts the rows of saved files inside the caller's transaction. */
  async record(trx: Kysely<DB>, files: Recorded[]): Promise<void> {
    if (files.length === 0) return;
    await trx.insertInto('files').values(this.rows(files)).execute();
  }

  /** The `files` rows of saved files, for a caller that inserts them with its own statement (a task's finish: moveTask's `then`). */
  rows(files: readonly Recorded[]): Insertable<FilesTable>[] {
    const now = this.clock.now();
    return files.map((r) => ({
      id: r.id,
      account_id: r.account_id,
      task_id: r.task_id,
      purpose: r.purpose,
      name: r.name,
      mime: r.mime,
      bytes: r.bytes,
      blob_key: r.blobKey,
      kind: r.kind,
      format: r.format,
      seconds: r.seconds,
      created_at: now,
      expires_at: r.expires_at,
      deleted_at: null,
    }));
  }

  /** The public link of a stored file. */
  url(id: string, name: string): string {
    return `${this.publicBaseUrl}/files/${id}/${encodeURIComponent(name)}`;
  }

  /** The file id of one of our links (`{PUBLIC_BASE_URL}/files/<id>/<name>`), or null for any other link. */
  linkId(link: string): string | null {
    const prefix = `${this.publicBaseUrl}/files/`;
    if (!link.startsWith(prefix)) return null;
    const [id, name] = link.slice(prefix.length).split('/');
    return id && name ? id : null;
  }

  /**
   * The file behind one of our links if it belongs to `accountId` and has not expired: the id, name and expiry.
   * 'foreign' for a link that is not one of ours, 'unknown' for one that is but names no live file of the account.
   */
  async owned(link: string, accountId: string): Promise<{ id: string; name: string; expiresAt: number } | OwnedRefusal> {
    const bare = link.split(/[?#]/)[0]!;
    const id = this.linkId(bare);
    const name = linkName(bare);
    if (!id || name === null || bare.slice(`${this.publicBaseUrl}/files/`.length).split('/').length !== 2) return 'foreign';
    const row = await this.database.db
      .selectFrom('files')
      .select(['expires_at', 'deleted_at'])
      .where('id', '=', id)
      .where('name', '=', name)
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    if (!row || row.deleted_at !== null || Number(row.expires_at) <= this.clock.now()) return 'unknown';
    return { id, name, expiresAt: Number(row.expires_at) };
  }

  /** A link to the bytes of file `id` that works until `until` (ms since epoch): `/files/dl/<sealed id and expiry>/<name>`. */
  downloadLink(id: string, name: string, until: number): string {
    if (!this.sealer) throw new Error('download links need the secret box');
    // Whole seconds in base 36 (rounded down: never longer than asked) keep the token under Fastify's 100-character parameter limit.
    const token = this.sealer.sealToken(`${id}:${Math.floor(until / 1000).toString(36)}`);
    return `${this.publicBaseUrl}/files/dl/${token}/${encodeURIComponent(name)}`;
  }

  /** The file of a download link, its expiry the earlier of the file's and the link's; null when the token is not ours, the link expired or the file is gone. */
  async openDownload(token: string, name: string): Promise<OpenFile | null> {
    const plain = this.sealer?.openToken(token);
    const m = plain ? /^([A-Za-z0-9_-]+):([0-9a-z]+)$/.exec(plain) : null;
    if (!m) return null;
    const until = parseInt(m[2]!, 36) * 1000;
    if (until <= this.clock.now()) return null;
    const file = await this.open(m[1]!, name);
    return file && { ...file, expiresAt: Math.min(file.expiresAt, until) };
  }

  /** A file that may be served now, or null (unknown, deleted or past its expiry even if not yet swept). */
  async open(id: string, name: string): Promise<OpenFile | null> {
    const [row] = await this.findOpen(id, name);
    if (!row || row.deleted_at !== null || Number(row.expires_at) <= this.clock.now()) return null;
    return { mime: row.mime, bytes: Number(row.bytes), blobKey: row.blob_key, expiresAt: Number(row.expires_at) };
  }
}

/** The file name at the end of a link, %-decoded; null when its %-escapes are malformed (a client's typo, not a server error). */
export function linkName(link: string): string | null {
  try {
    return decodeURIComponent(link.slice(link.lastIndexOf('/') + 1));
  } catch {
    return null;
  }
}
