import { createReadStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { AppError, Errors, shown } from '../errors.js';
import type { StoredUpload } from '../files/index.js';
import { NetError } from '../net/index.js';
import type { Services } from '../services.js';

/**
 * Uploads from a link or from base64 text, shared by kie.ai's file-url-upload and
 * file-base64-upload and the MCP tool upload_file: the same upload service, limits and messages
 * (the fields are named `fileUrl` and `base64Data` in all three).
 */

/** Whole-transfer deadline of a download from `fileUrl`. */
const URL_FETCH_TIMEOUT_MS = 120_000;
/** Decoded in slices of this many characters (a multiple of 4), so the bytes never exist as one more copy. */
const SLICE = 4 * 1024 * 1024;

/** The largest upload of any kind: the download limit. */
export const maxUploadBytes = (s: Services) => Math.max(s.config.UPLOAD_MAX_IMAGE_BYTES, s.config.UPLOAD_MAX_MEDIA_BYTES);

/** Downloads `fileUrl` through the network guard and stores it as an upload of the account (named `fileName`, else the link's last part). */
export async function uploadFromUrl(services: Services, accountId: string, fileUrl: string, fileName: string | undefined): Promise<StoredUpload> {
  const maxBytes = maxUploadBytes(services);
  const tmp = await services.uploads.tempFile();
  try {
    await services.guard.download(fileUrl, tmp, { maxBytes, timeoutMs: URL_FETCH_TIMEOUT_MS }).catch((e: unknown) => {
      throw e instanceof NetError ? fetchRefusal(e, fileUrl, maxBytes) : e;
    });
    return await services.uploads.store(accountId, createReadStream(tmp), fileName ?? lastPart(fileUrl));
  } finally {
    await rm(tmp, { force: true });
  }
}

/** Stores base64 text (raw or a data: URL) as an upload of the account. */
export function uploadFromBase64(services: Services, accountId: string, base64Data: string, fileName: string | undefined): Promise<StoredUpload> {
  return services.uploads.store(accountId, decodeBase64(base64Data), fileName);
}

/** The bytes of `base64Data` (raw base64, or a data: URL with ;base64) as a stream, decoded slice by slice. */
function decodeBase64(text: string): Readable {
  let data = text;
  const head = /^data:([^,]{0,200}),/i.exec(data.slice(0, 256));
  if (head) {
    if (!/;base64$/i.test(head[1]!)) throw Errors.invalid(`base64Data: a data: URL must be base64-encoded (data:<type>;base64,...) (got ${shown(head[0])})`);
    data = data.slice(head[0].length);
  }
  if (data === '') throw Errors.missingField('base64Data', 'send the file as base64 text or a data: URL');
  if (/\s/.test(data)) data = data.replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(data)) {
    throw Errors.invalid(`base64Data must be base64 text or a data: URL (data:<type>;base64,...) (got ${shown(data.slice(0, 40))})`);
  }
  return Readable.from(
    (function* () {
      for (let i = 0; i < data.length; i += SLICE) yield Buffer.from(data.slice(i, i + SLICE), 'base64');
    })(),
    { objectMode: false },
  );
}

/** A failed download of `fileUrl` as the client's error: an address the guard refuses 400, a file too large or not there 422. */
function fetchRefusal(e: NetError, url: string, maxBytes: number): AppError {
  if (e.code === 'bad_url' || e.code === 'blocked') return Errors.invalid(`fileUrl must be a public http(s) link: ${e.message} (got ${shown(url)})`);
  if (e.code === 'too_large')
    return Errors.uploadRejected(`fileUrl: the file must be at most ${Math.round((maxBytes / 1024 / 1024) * 10) / 10} MB (${e.message})`);
  return Errors.uploadRejected(`fileUrl could not be downloaded: ${e.message} (got ${shown(url)})`);
}

/** The last path part of a link, as a name to sanitise; undefined when there is none. */
function lastPart(url: string): string | undefined {
  try {
    return decodeURIComponent(new URL(url).pathname.split('/').pop() ?? '') || undefined;
  } catch {
    return undefined;
  }
}
