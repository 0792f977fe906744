import type { Files } from '../../files/index.js';
import { NetError } from '../../net/index.js';
import { NotAccepted, swapOwnLinks, type UpstreamHttp } from '../upstream/index.js';
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
export function uploadLinks(input: Record<string, unknown>, files: Files, target: UploadTarget, known: Map<string, string>): Promise<Record<string, unknown>> {
  return swapOwnLinks(input, files, known, (local, name, mime) => uploadOne(target, local, name, mime), {
    tmpDir: target.tmpDir,
    scratchPrefix: 'same-api-up-',
    where: 'upstream',
  });
}

async function uploadOne(target: UploadTarget, local: string, name: string, mime: string): Promise<string> {
  let res;
  try {
    res = await target.http.upload(`${target.baseUrl}/api/v1/files/upload`, local, { filename: name, mime, headers: target.headers });
  } catch (e) {
    // Nothing was created upstream yet: safe to try again or elsewhere.
    if (e instanceof NetError) throw new NotAccepted(`upload of ${name}: ${e.message}`);
    throw e;
  }
  const data = (res.data as { data?: { url?: unknown } } | undefined)?.data;
  if (res.status === 200 && typeof data?.url === 'string') return data.url;
  const why = `upload of ${name} to the upstream answered HTTP ${res.status}: ${res.text.slice(0, 200)}`;
  if (res.status === 400 || res.status === 422) throw new BackendFailure('rejected', why);
  throw new NotAccepted(why);
}
