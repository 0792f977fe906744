import { linkName } from '../files/index.js';
import type { Services } from '../services.js';

/** An MCP content item: image or audio (base64 bytes) or a resource link. */
type Content = Record<string, unknown>;

/** The links of a finished task's results (`resultJson` is a JSON string or, for SPEC video, an object). */
function resultUrls(task: Record<string, unknown>): string[] {
  if (task.state !== 'success') return [];
  let result: unknown = task.resultJson;
  if (typeof result === 'string') {
    try {
      result = JSON.parse(result);
    } catch {
      return [];
    }
  }
  const urls = (result as { resultUrls?: unknown } | null)?.resultUrls;
  return Array.isArray(urls) ? urls.filter((u): u is string => typeof u === 'string') : [];
}

/**
 * A succeeded task's results as MCP content (issue 22): an image or audio file goes inline while
 * the inline total stays within MCP_INLINE_MAX_BYTES; anything else (a video, a large file, a
 * link that is not one of GenGate's files) as a `resource_link` to its URL.
 */
export async function resultMedia(services: Services, task: Record<string, unknown>): Promise<Content[]> {
  let budget = services.config.MCP_INLINE_MAX_BYTES;
  const out: Content[] = [];
  for (const uri of resultUrls(task)) {
    const id = services.files.linkId(uri.split(/[?#]/)[0]!);
    const name = linkName(uri.split(/[?#]/)[0]!);
    const file = id && name ? await services.files.open(id, name) : null;
    if (!file) {
      out.push({ type: 'resource_link', uri, name: name ?? uri });
      continue;
    }
    const kind = file.mime.startsWith('image/') ? 'image' : file.mime.startsWith('audio/') ? 'audio' : null;
    if (kind && file.bytes <= budget) {
      budget -= file.bytes;
      out.push({ type: kind, data: (await readAll(services, file.blobKey)).toString('base64'), mimeType: file.mime });
    } else {
      out.push({ type: 'resource_link', uri, name: name!, mimeType: file.mime, size: file.bytes });
    }
  }
  return out;
}

async function readAll(services: Services, key: string): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const chunk of services.files.blobs.read(key)) parts.push(chunk as Buffer);
  return Buffer.concat(parts);
}
