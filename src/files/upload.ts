import { randomBytes } from 'node:crypto';
import { mkdir, readdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import type { Clock } from '../clock.js';
import { Errors } from '../errors.js';
import {
  MediaError,
  movToMp4,
  probe,
  probeWhole,
  typeOf,
  videoOverLimits,
  wholeSeconds,
  type MediaInfo,
  type Sniffed,
  type VideoLimits,
} from '../media/index.js';
import type { Database } from '../store/index.js';
import type { Files } from './files.js';
import { ReceiveRefusal, receive, type UploadLimits } from './receive.js';

/** SPEC: "One uploaded file may be up to 30 s" (DECISIONS §10). */
export const MAX_UPLOAD_SECONDS = 30;
/** Uploads are kept 24 hours (DECISIONS §9). */
export const UPLOAD_RETENTION_MS = 24 * 60 * 60 * 1000;
/** Temporary files older than this are leftovers of a crash. */
const STALE_TMP_MS = 60 * 60 * 1000;

/** Settings of the upload service. */
export interface UploadSettings extends UploadLimits {
  /** Largest accepted photo in pixels (width × height): decompression bombs are refused from the header. */
  imagePixels: number;
  /** Largest video by probed size, frame rate and frame count, refused before anything decodes it. */
  video: VideoLimits;
  /** Folder for files being received; on the blob store's file system so storing is a rename. */
  tmpDir: string;
}

/** `data` of POST /files/upload (SPEC "Upload result"). */
export interface UploadResult {
  url: string;
  fileName: string;
  expiresInDays: 1;
  kind: 'image' | 'video' | 'audio';
  /** Seconds of a video or audio file (0 for a photo). */
  duration: number;
  /** Whole seconds, rounded half up (DECISIONS §5); 0 for a photo. */
  seconds: number;
}

/**
 * A stored file name from the client's: last path part only, no control or other unsafe
 * characters, at most 100 characters, and the extension of the type its bytes showed.
 */
export function safeFileName(clientName: string | undefined, ext: string): string {
  const last = (clientName ?? '').split(/[\\/]/).pop() ?? '';
  const stem = safePart(
    last
      .normalize('NFKD')
      .replace(/[\u0300-\u036f]/g, '')
      .replace(/\.[^.]*$/, ''),
  );
  return `${stem || 'upload'}.${ext}`;
}

/** One sanitised part of a path: the rules of `safeFileName` without the extension; '' when nothing is left. */
function safePart(part: string): string {
  return part
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .replace(/^[^A-Za-z0-9]+/, '')
    .replace(/[.-]+$/, '')
    .slice(0, 100);
}

/**
 * A client's folder (kie.ai's `uploadPath`) as a relative path: split at `/` and `\`, `.` and `..`
 * and empty parts dropped, each part sanitised like a file name, at most 5 parts; '' when nothing is left.
 */
export function safeFolder(clientPath: string | undefined): string {
  return (clientPath ?? '')
    .split(/[\\/]/)
    .filter((p) => p !== '.' && p !== '..')
    .map(safePart)
    .filter(Boolean)
    .slice(0, 5)
    .join('/');
}

/** An accepted upload with what kie.ai's answer shows besides GenGate's `data`. */
export interface StoredUpload {
  result: UploadResult;
  bytes: number;
  mime: string;
  /** When the upload was recorded (ms since epoch). */
  uploadedAt: number;
}

/**
 * POST /files/upload (DECISIONS §10): streams the body to a temporary file under the size limit
 * of its kind, decides the kind from the bytes, probes it, refuses bombs, broken media and clips
 * over 30 s, converts MOV to MP4, and stores it as an upload of the account for 24 hours.
 */
export class Uploads {
  constructor(
    private readonly database: Database,
    private readonly files: Files,
    private readonly clock: Clock,
    private readonly settings: UploadSettings,
  ) {}

  /** Receives one file; refusals are 422 `validation_error` naming the reason. */
  async accept(accountId: string, source: Readable, clientName: string | undefined): Promise<UploadResult> {
    return (await this.store(accountId, source, clientName)).result;
  }

  /**
   * `accept` with the stored size, type and time. The client's name may still be coming (a
   * multipart field after the file): it is awaited once the bytes are in.
   */
  async store(accountId: string, source: Readable, clientName: string | undefined | Promise<string | undefined>): Promise<StoredUpload> {
    await mkdir(this.settings.tmpDir, { recursive: true });
    const stem = path.join(this.settings.tmpDir, `upload-${randomBytes(9).toString('base64url')}`);
    const received = `${stem}.in`;
    const converted = `${stem}.mp4`;
    try {
      let type: Sniffed;
      try {
        ({ type } = await receive(source, received, this.settings));
      } catch (e) {
        if (e instanceof ReceiveRefusal) throw Errors.uploadRejected(e.message);
        throw e;
      }
      let file = received;
      let info = await this.inspect(received, type);
      if (type.format === 'mov') {
        info = await movToMp4(received, converted).catch((e: unknown) => Promise.reject(unreadable(e, type)));
        type = typeOf('mp4');
        file = converted;
      }
      const name = safeFileName(await clientName, type.ext);
      const stored = await this.files.save(file, name, type.mime, { move: true });
      const now = this.clock.now();
      const seconds = type.kind === 'image' ? null : wholeSeconds(info.durationSeconds);
      try {
        await this.database.tx((trx) =>
          this.files.record(trx, [
            {
              ...stored,
              account_id: accountId,
              task_id: null,
              purpose: 'upload',
              kind: type.kind,
              format: type.format,
              seconds,
              expires_at: now + UPLOAD_RETENTION_MS,
            },
          ]),
        );
      } catch (e) {
        await this.files.blobs.delete(stored.blobKey);
        throw e;
      }
      const result: UploadResult = {
        url: this.files.url(stored.id, name),
        fileName: name,
        expiresInDays: 1,
        kind: type.kind,
        duration: type.kind === 'image' ? 0 : Math.round(info.durationSeconds * 1000) / 1000,
        seconds: seconds ?? 0,
      };
      return { result, bytes: stored.bytes, mime: type.mime, uploadedAt: now };
    } finally {
      await Promise.all([rm(received, { force: true }), rm(converted, { force: true })]);
    }
  }

  /** Probes a received file and checks it is whole, of the kind its bytes claim, and within the limits. */
  private async inspect(file: string, type: Sniffed): Promise<MediaInfo> {
    if (type.kind === 'image') await this.checkPixels(file, type);
    // Video and audio: reading every packet (no decoding) finds truncated and corrupt files the header
    // alone hides; it is done by the probe's own ffprobe run, so the file is read once (decision 0316).
    const read = type.kind === 'image' ? probe(file).then((info) => ({ info, damage: null })) : probeWhole(file);
    const { info, damage } = await read.catch((e: unknown) => Promise.reject(unreadable(e, type)));
    if (info.kind !== type.kind) {
      throw Errors.uploadRejected(
        `file must be readable ${type.kind === 'image' ? 'an' : 'a'} ${type.kind} file as its ${type.format.toUpperCase()} header says (got ${info.kind} content)`,
      );
    }
    if (type.kind === 'image') return info;
    const over = videoOverLimits(info, this.settings.video);
    if (over) throw Errors.uploadRejected(over);
    if (wholeSeconds(info.durationSeconds) > MAX_UPLOAD_SECONDS) {
      throw Errors.uploadRejected(
        `file must be a ${type.kind} of at most ${MAX_UPLOAD_SECONDS} s (got ${Math.round(info.durationSeconds * 10) / 10} s); cut it before uploading`,
      );
    }
    // Judged last, as when the packets were read by a second run beside the probe.
    if (damage) throw unreadable(new MediaError(`check ${file}`, 'unreadable', damage), type);
    return info;
  }

  /** Refuses photos whose header announces more pixels than allowed, before anything decodes them. */
  private async checkPixels(file: string, type: Sniffed): Promise<void> {
    const { default: sharp } = await import('sharp'); // loaded on the first photo: the CLI never needs libvips
    const meta = await sharp(file, { limitInputPixels: false })
      .metadata()
      .catch(() => null);
    if (!meta?.width || !meta.height) throw unreadable(null, type);
    const pixels = meta.width * meta.height;
    if (pixels > this.settings.imagePixels) {
      throw Errors.uploadRejected(`file must be a photo of at most ${this.settings.imagePixels} pixels (got ${meta.width}×${meta.height} = ${pixels} pixels)`);
    }
  }

  /** A fresh temporary file name for bytes on their way to `store` (a download); a leftover is swept like any upload's. */
  async tempFile(): Promise<string> {
    await mkdir(this.settings.tmpDir, { recursive: true });
    return path.join(this.settings.tmpDir, `upload-${randomBytes(9).toString('base64url')}.url`);
  }

  /** Removes temporary files a crashed process left behind; best effort. */
  async sweepTemp(): Promise<void> {
    const names = await readdir(this.settings.tmpDir).catch(() => [] as string[]);
    const cutoff = Date.now() - STALE_TMP_MS;
    for (const name of names.filter((n) => n.startsWith('upload-'))) {
      const file = path.join(this.settings.tmpDir, name);
      const old = await stat(file).then(
        (s) => s.mtimeMs < cutoff,
        () => false,
      );
      if (old) await rm(file, { force: true });
    }
  }
}

/** A file ffmpeg cannot read is the client's problem (422); anything else (missing binary, timeout) is ours. */
function unreadable(e: unknown, type: Sniffed): Error {
  if (e instanceof MediaError && e.reason === 'too_large') return Errors.uploadRejected(e.detail);
  if (e !== null && !(e instanceof MediaError && (e.reason === 'unreadable' || e.reason === 'failed'))) return e as Error;
  return Errors.uploadRejected(`file must be a readable ${type.format.toUpperCase()} file (got one that is damaged or truncated)`);
}
