import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { linkName, type Files } from '../../files/index.js';
import { NetError } from '../../net/index.js';
import { NotAccepted, type UpstreamHttp } from '../upstream/index.js';
import { BackendFailure } from '../types.js';

/** Where the adapter sends files and how it authenticates. */
export interface UploadTarget {
  readonly http: UpstreamHttp;
  readonly baseUrl: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly tmpDir: string;
}

/**
 * Replaces every link to one of OUR stored files (uploads, trimmed clips) anywhere in the input
 * with a link on the upstream, by uploading the file to its `/api/v1/files/upload` first: the
 * upstream only takes video and audio it stored itself (DECISIONS §10) and may not reach our
 * address. Public photo links and asset ids go through unchanged. `known` remembers what was
 * uploaded for this task, so a repeated submit sends the same body (the Idempotency-Key needs it).
 */
export async function uploadLinks(
  input: Record<string, unknown>,
  files: Files,
  target: UploadTarget,
  known: Map<string, string>,
): Promise<Record<string, unknown>> {
  const swap = async (v: unknown): Promise<unknown> => {
    if (typeof v === 'string') return files.linkId(v) ? await uploadOne(v, files, target, known) : v;
    if (Array.isArray(v)) {
      const out: unknown[] = [];
      for (const x of v) out.push(await swap(x));
      return out;
    }
    return v;
  };
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(input)) out[k] = await swap(v);
  return out;
}

async function uploadOne(link: string, files: Files, target: UploadTarget, known: Map<string, string>): Promise<string> {
  const done = known.get(link);
  if (done) return done;
  const id = files.linkId(link)!;
  const name = linkName(link) ?? '';
  const file = name ? await files.open(id, name) : null;
  if (!file) throw new BackendFailure('rejected', `the file ${name} of the input has expired or was deleted before it could be sent upstream`);
  const scratch = await mkdtemp(path.join(target.tmpDir, 'same-api-up-'));
  try {
    const local = path.join(scratch, name);
    await pipeline(files.blobs.read(file.blobKey), createWriteStream(local));
    let res;
    try {
      res = await target.http.upload(`${target.baseUrl}/api/v1/files/upload`, local, { filename: name, mime: file.mime, headers: target.headers });
    } catch (e) {
      // Nothing was created upstream yet: safe to try again or elsewhere.
      if (e instanceof NetError) throw new NotAccepted(`upload of ${name}: ${e.message}`);
      throw e;
    }
    const data = (res.data as { data?: { url?: unknown } } | undefined)?.data;
    if (res.status === 200 && typeof data?.url === 'string') {
      known.set(link, data.url);
      return data.url;
    }
    const why = `upload of ${name} to the upstream answered HTTP ${res.status}: ${res.text.slice(0, 200)}`;
    if (res.status === 400 || res.status === 422) throw new BackendFailure('rejected', why);
    throw new NotAccepted(why);
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}
