import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../../services.js';
import { Errors } from '../../errors.js';

/** One byte range of `size` from a Range header: [start, end] inclusive, 'unsatisfiable', or null to send everything. */
export function byteRange(header: string | undefined, size: number): { start: number; end: number } | 'unsatisfiable' | null {
  if (!header) return null;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  // Several ranges or another unit: sending the whole file is a valid answer (RFC 9110 §14.2).
  if (!m || (m[1] === '' && m[2] === '')) return null;
  let start: number;
  let end: number;
  if (m[1] === '') {
    const suffix = Number(m[2]);
    if (suffix === 0) return 'unsatisfiable';
    start = Math.max(0, size - suffix);
    end = size - 1;
  } else {
    start = Number(m[1]);
    end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  }
  if (start >= size || start > end) return 'unsatisfiable';
  return { start, end };
}

/** GET (and HEAD) /files/<id>/<name>: result (and upload) files with their Content-Type and Range support; 404 once expired. */
export function registerFileRoutes(app: FastifyInstance, services: Services) {
  const { files } = services;
  const serve = async (req: FastifyRequest, reply: FastifyReply) => {
    const { id, name } = req.params as { id: string; name: string };
    const file = await files.open(id, name);
    if (!file) throw Errors.notFound(`no file /files/${id}/${name}: the link is wrong or the file expired (files are kept 24 hours)`);
    reply
      .header('accept-ranges', 'bytes')
      .header('content-type', file.mime)
      .header('cache-control', 'private, max-age=3600')
      .header('content-disposition', `inline; filename="${name}"`);
    const range = byteRange(req.headers.range, file.bytes);
    if (range === 'unsatisfiable') {
      return reply.code(416).header('content-range', `bytes */${file.bytes}`).send();
    }
    const length = range ? range.end - range.start + 1 : file.bytes;
    reply.header('content-length', String(length));
    if (range) reply.code(206).header('content-range', `bytes ${range.start}-${range.end}/${file.bytes}`);
    return reply.send(files.blobs.read(file.blobKey, range ?? undefined));
  };
  // Fastify answers HEAD from this route too (headers only).
  app.get('/files/:id/:name', serve);
}
