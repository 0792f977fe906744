import { createWriteStream } from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { linkName, type Files } from '../../files/index.js';
import { NetError } from '../../net/index.js';
import { BackendFailure } from '../types.js';
import type { UpstreamHttp } from '../upstream/index.js';
import { NotAccepted } from '../upstream/index.js';

/** A photo of the input, copied to a local file so it can be uploaded to whichever server takes the job. */
export interface LocalPhoto {
  readonly path: string;
  /** The name it is uploaded under: `gengate-<task>-<placeholder>.<ext>` (a repeated submit replaces the same file). */
  readonly name: string;
  readonly mime: string;
}

const MIME: Readonly<Record<string, string>> = { '.png': 'image/png', '.jpg': 'image/jpeg', '.jpeg': 'image/jpeg', '.webp': 'image/webp', '.gif': 'image/gif' };

/**
 * Copies one photo link of the input into `dir`: one of our own uploads is read from the file store,
 * any other link is downloaded through the network guard (size and time limits).
 */
export async function fetchPhoto(link: string, placeholder: string, taskId: string, dir: string, files: Files, http: UpstreamHttp): Promise<LocalPhoto> {
  const own = files.linkId(link);
  const given = own ? (linkName(link) ?? '') : safeName(link);
  const ext = MIME[path.extname(given).toLowerCase()] ? path.extname(given).toLowerCase() : '.png';
  const name = `gengate-${taskId}-${placeholder}${ext}`;
  const dest = path.join(dir, name);
  if (own) {
    const file = given ? await files.open(own, given) : null;
    if (!file) throw new BackendFailure('rejected', `the photo ${given} of the input has expired or was deleted before it could be sent to ComfyUI`);
    await pipeline(files.blobs.read(file.blobKey), createWriteStream(dest));
    return { path: dest, name, mime: file.mime };
  }
  try {
    const got = await http.downloadGiven(link, dest, { maxBytes: 50 * 1024 * 1024, timeoutMs: 120_000 });
    return { path: dest, name, mime: got.mime?.startsWith('image/') ? got.mime : (MIME[ext] ?? 'image/png') };
  } catch (e) {
    if (e instanceof NetError && (e.status === 404 || e.status === 410 || e.code === 'blocked' || e.code === 'bad_url' || e.code === 'too_large')) {
      throw new BackendFailure('rejected', `the photo ${link.slice(0, 200)} could not be fetched: ${e.message}`);
    }
    // Nothing was queued yet: safe to try again.
    throw new NotAccepted(`fetching the photo ${link.slice(0, 200)}: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/** The last path segment of a link, for its extension. */
function safeName(link: string): string {
  try {
    return path.basename(new URL(link).pathname);
  } catch {
    return '';
  }
}
