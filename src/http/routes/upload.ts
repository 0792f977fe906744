import multipart from '@fastify/multipart';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Services } from '../../services.js';
import { AppError, Errors } from '../../errors.js';
import { ok } from '../../api/index.js';
import { principalOf, requireKey } from '../auth.js';

const FIELD_HINT = "send multipart/form-data with the file in the field named file, e.g. curl -F 'file=@photo.jpg'";

/** POST /api/v1/files/upload (SPEC endpoint 4): multipart field `file`, streamed, checked and stored for 24 hours. */
export function registerUploadRoutes(app: FastifyInstance, services: Services) {
  const { uploads } = services;
  // In its own scope, so the multipart parser exists only for this route.
  app.register(async (scope) => {
    await registerMultipart(scope, services);
    scope.post('/api/v1/files/upload', { config: { cors: 'keyed' }, preParsing: requireKey(services, 'files:write') }, async (req, reply) => {
      if (!req.isMultipart()) throw Errors.missingField('file', FIELD_HINT);
      let part;
      try {
        part = await req.file();
      } catch (e) {
        throw clientError(e, reply);
      }
      if (!part) throw Errors.missingField('file', FIELD_HINT);
      if (part.fieldname !== 'file') {
        closeAfter(reply);
        throw Errors.missingField('file', `${FIELD_HINT} (got a file in the field ${JSON.stringify(part.fieldname.slice(0, 100))})`);
      }
      try {
        return ok(await uploads.accept(principalOf(req).accountId, part.file, part.filename));
      } catch (e) {
        throw clientError(e, reply);
      }
    });
  });
}

/** The multipart parser of the upload routes, in the caller's scope. */
export async function registerMultipart(scope: FastifyInstance, services: Services): Promise<void> {
  const maxBytes = Math.max(services.config.UPLOAD_MAX_IMAGE_BYTES, services.config.UPLOAD_MAX_MEDIA_BYTES);
  await scope.register(multipart, {
    // One byte over the largest limit: our own gate (by kind) always answers first.
    limits: { files: 1, fileSize: maxBytes + 1, fields: 20, fieldSize: 64 * 1024, parts: 40, headerPairs: 200 },
  });
}

/**
 * After a refusal the rest of the body is not read: the connection is closed with the answer, so
 * a client sending 1 GB is cut off instead of the server draining it.
 */
function closeAfter(reply: FastifyReply): void {
  reply.header('connection', 'close');
}

/** Malformed multipart bodies are the client's mistake (422 naming the field); our own errors pass through. */
export function clientError(e: unknown, reply: FastifyReply, hint = FIELD_HINT): unknown {
  closeAfter(reply);
  if (e instanceof AppError) return e;
  const code = (e as { code?: string }).code ?? '';
  if (code === 'FST_REQ_FILE_TOO_LARGE') return Errors.uploadRejected('file is larger than the upload limit (the upload was cut off)');
  if (code.startsWith('FST_') || /multipart|boundary|unexpected end/i.test((e as Error).message ?? '')) {
    return Errors.missingField('file', `${hint} (the multipart body could not be read: ${(e as Error).message})`);
  }
  return e;
}
