import { once } from 'node:events';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../../services.js';
import { Errors } from '../../errors.js';
import type { OpenFile } from '../../files/index.js';

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

/**
 * Headers of every /files answer: files are served on the console's origin, so a browser must
 * neither guess a type other than the one stored nor run anything a file holds (an uploaded
 * HTML or SVG page would otherwise run with the console's origin; decision 2303).
 */
export const FILE_HEADERS = {
  'x-content-type-options': 'nosniff',
  'content-security-policy': "sandbox; default-src 'none'; img-src 'self' data:; media-src 'self'; style-src 'unsafe-inline'",
};

/** Longest life of a presigned link; a shorter one when the file expires sooner. */
const SIGNED_LINK_SECONDS = 3600;

/**
 * GET (and HEAD) /files/<id>/<name>: result (and upload) files with their Content-Type and Range
 * support; 404 once expired. With FILE_LINKS=presigned (S3 store) a 302 to a presigned URL instead,
 * so the bytes do not pass through GenGate; the expiry check stays here either way.
 */
export function registerFileRoutes(app: FastifyInstance, services: Services) {
  const { files, config, clock } = services;
  const signed = config.FILE_LINKS === 'presigned' ? files.blobs.signedLink?.bind(files.blobs) : undefined;
  const serve = async (req: FastifyRequest, reply: FastifyReply) => {
    reply.headers(FILE_HEADERS);
    const { id, name } = req.params as { id: string; name: string };
    const file = await files.open(id, name);
    if (!file) throw Errors.notFound(`no file /files/${id}/${name}: the link is wrong or the file expired (files are kept 24 hours)`);
    return send(req, reply, `/files/${id}/${name}`, name, file);
  };
  // A download link of POST /common/download-url: the sealed token names the file and when the link stops working.
  const serveDownload = async (req: FastifyRequest, reply: FastifyReply) => {
    reply.headers(FILE_HEADERS);
    const { token, name } = req.params as { token: string; name: string };
    const file = await files.openDownload(token, name);
    if (!file)
      throw Errors.notFound(
        `no file at this download link: the link is wrong or expired (download links work 20 minutes; ask POST /api/v1/common/download-url again)`,
      );
    reply.header('cache-control', 'private, no-store');
    return send(req, reply, 'at this download link', name, file);
  };
  // `shown` names the link in a 404 (a download link's answer never shows the file's lasting id).
  const send = async (req: FastifyRequest, reply: FastifyReply, shown: string, name: string, file: OpenFile) => {
    if (signed) {
      const seconds = Math.min(SIGNED_LINK_SECONDS, (file.expiresAt - clock.now()) / 1000);
      const link = await signed(file.blobKey, { expiresInSeconds: seconds, fileName: name, mime: file.mime });
      return reply.code(302).header('location', link).header('cache-control', 'no-store').send();
    }
    reply
      .header('accept-ranges', 'bytes')
      .header('content-type', file.mime)
      .header('cache-control', reply.getHeader('cache-control') ?? 'private, max-age=3600')
      .header('content-disposition', `inline; filename="${name}"`);
    const range = byteRange(req.headers.range, file.bytes);
    if (range === 'unsatisfiable') {
      return reply.code(416).header('content-range', `bytes */${file.bytes}`).send();
    }
    const length = range ? range.end - range.start + 1 : file.bytes;
    reply.header('content-length', String(length));
    if (range) reply.code(206).header('content-range', `bytes ${range.start}-${range.end}/${file.bytes}`);
    const bytes = files.blobs.read(file.blobKey, range ?? undefined);
    try {
      // The first chunk (or the error) before any byte is sent: bytes gone from the store answer 404, not a broken 200.
      await once(bytes, 'readable');
    } catch {
      bytes.destroy();
      reply.removeHeader('content-length').removeHeader('content-range').removeHeader('content-disposition').removeHeader('accept-ranges');
      reply.type('application/json; charset=utf-8');
      throw Errors.notFound(`no file ${shown}: its bytes are no longer stored`);
    }
    return reply.send(bytes);
  };
  // Fastify answers HEAD from this route too (headers only).
  app.get('/files/:id/:name', serve);
  app.get('/files/dl/:token/:name', serveDownload);
}
