import type { Files } from '../../files/index.js';
import { NetError } from '../../net/index.js';
import { NotAccepted, swapOwnLinks, type UpstreamHttp } from '../upstream/index.js';
import { BackendFailure } from '../types.js';

/** kie.ai's upload host and how to reach it. */
export interface KieUploadTarget {
  readonly http: UpstreamHttp;
  /** The upload host's address (its endpoints live at its root). */
  readonly uploadUrl: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly tmpDir: string;
  /** The folder the files go to on the upload host (`uploadPath`). */
  readonly folder: string;
}

/**
 * Replaces every link to one of GenGate's own stored files (photos, videos, audio; trimmed clips)
 * in the input with a link on kie.ai's upload host (KIE.md §6): `POST /api/file-stream-upload`
 * (multipart `file`, `uploadPath`, `fileName`) answers `data.downloadUrl`. kie.ai may not reach
 * GenGate's address, and its models take only links they can fetch. Public links pass unchanged.
 * `known` remembers the uploads of this task, so a retried submit does not upload again.
 */
export function uploadToKie(
  input: Record<string, unknown>,
  files: Files,
  target: KieUploadTarget,
  known: Map<string, string>,
): Promise<Record<string, unknown>> {
  return swapOwnLinks(input, files, known, (local, name, mime) => uploadOne(target, local, name, mime), {
    tmpDir: target.tmpDir,
    scratchPrefix: 'kie-up-',
    where: 'to kie.ai',
  });
}

async function uploadOne(target: KieUploadTarget, local: string, name: string, mime: string): Promise<string> {
  let res;
  try {
    res = await target.http.upload(`${target.uploadUrl}/api/file-stream-upload`, local, {
      filename: name,
      mime,
      headers: target.headers,
      fields: { uploadPath: target.folder, fileName: name },
    });
  } catch (e) {
    // No generation task exists yet: another try (here or on the next route) is safe.
    if (e instanceof NetError) throw new NotAccepted(`upload of ${name} to kie.ai: ${e.message}`);
    throw e;
  }
  const body = res.data as { success?: unknown; code?: unknown; msg?: unknown; data?: { downloadUrl?: unknown } } | undefined;
  const url = body?.data?.downloadUrl;
  if (res.status === 200 && body?.success !== false && (body?.code === undefined || Number(body.code) === 200) && typeof url === 'string' && url) return url;
  const code = res.status === 200 && body?.code !== undefined ? Number(body.code) : res.status;
  const why = `upload of ${name} to kie.ai answered ${code}: ${typeof body?.msg === 'string' ? body.msg : res.text.slice(0, 200)}`;
  if (code === 400 || code === 413 || code === 422) throw new BackendFailure('rejected', why);
  throw new NotAccepted(why);
}
