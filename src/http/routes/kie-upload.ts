import type { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../../services.js';
import { Errors, parseWith } from '../../errors.js';
import { safeFolder, type StoredUpload } from '../../files/index.js';
import { base64UploadBody, maxUploadBytes, streamBase64Body, uploadFromUrl, urlUploadBody } from '../../api/index.js';
import { principalOf, requireKey } from '../auth.js';
import { errorHandler } from '../errors.js';
import { clientError, registerMultipart } from './upload.js';

/** kie.ai's three upload endpoints, at the root of GenGate's address (DECISIONS §18, KIE.md §3). */
export const KIE_UPLOAD_PATHS = ['/api/file-stream-upload', '/api/file-base64-upload', '/api/file-url-upload'] as const;

const STREAM_HINT = "send multipart/form-data with the file in the field named file, e.g. curl -F 'file=@photo.jpg' -F 'uploadPath=images'";
/** JSON bodies are held as one string: never more than this, whatever the upload limits say. */
const MAX_BASE64_BODY = 384 * 1024 * 1024;

/** kie.ai's upload answer around a stored upload; `filePath` is the sanitised folder and the stored name. */
function answer(u: StoredUpload, uploadPath: string | undefined) {
  const folder = safeFolder(uploadPath);
  const { fileName, url } = u.result;
  return {
    success: true,
    code: 200,
    msg: 'File uploaded successfully',
    data: {
      fileName,
      filePath: folder ? `${folder}/${fileName}` : fileName,
      downloadUrl: url,
      fileSize: u.bytes,
      mimeType: u.mime,
      uploadedAt: new Date(u.uploadedAt).toISOString(),
    },
  };
}

/**
 * POST /api/file-stream-upload, /api/file-base64-upload and /api/file-url-upload: the upload
 * service of /api/v1/files/upload (limits, kinds, ownership, 24 hours) with kie.ai's request and
 * answer shapes; every refusal (the key's included) in kie.ai's shape with `success: false`.
 */
export function registerKieUploadRoutes(app: FastifyInstance, services: Services) {
  const { config } = services;
  const maxBytes = maxUploadBytes(services);
  // The key is checked before any byte of the body is read (issue 39 finding 1).
  const route = { config: { cors: 'keyed' as const }, preParsing: requireKey(services, 'files:write') };
  const scoped = (bodyLimit: number, register: (scope: FastifyInstance) => Promise<void> | void) =>
    app.register(async (scope) => {
      scope.setErrorHandler(errorHandler(config.ERROR_STYLE, bodyLimit, 'kie-upload'));
      await register(scope);
    });

  scoped(config.BODY_LIMIT_BYTES, async (scope) => {
    await registerMultipart(scope, services);
    scope.post('/api/file-stream-upload', route, async (req, reply) => answerStream(services, req, reply));
  });

  const base64Limit = Math.min(MAX_BASE64_BODY, Math.ceil(maxBytes / 3) * 4 + 64 * 1024);
  const nameFields = base64UploadBody.omit({ base64Data: true });
  scoped(base64Limit, (scope) => {
    // The body is read as it arrives, its base64 decoded on the way (decision 2301): never held whole.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('application/json', (_req, payload, done) => done(null, payload));
    scope.post('/api/file-base64-upload', { ...route, bodyLimit: base64Limit }, async (req, reply) => {
      if (Number(req.headers['content-length'] ?? 0) > base64Limit) {
        reply.header('connection', 'close');
        throw Errors.uploadRejected(`request body is larger than the limit of ${base64Limit} bytes`);
      }
      const { bytes, fields } = streamBase64Body(req.body as Readable, base64Limit);
      const given = fields.then((f) => parseWith(nameFields, f, ''));
      const name = given.then((f) => f.fileName);
      // The bytes fail first, with the same error, and the upload reports it; nobody else waits on these.
      given.catch(() => {});
      name.catch(() => {});
      bytes.on('error', () => {});
      try {
        const stored = await services.uploads.store(principalOf(req).accountId, bytes, name);
        return answer(stored, (await given).uploadPath);
      } catch (e) {
        if (!req.raw.complete) reply.header('connection', 'close');
        throw e;
      }
    });
  });

  scoped(config.BODY_LIMIT_BYTES, (scope) => {
    scope.post('/api/file-url-upload', route, async (req) => {
      const body = parseWith(urlUploadBody, req.body, '');
      return answer(await uploadFromUrl(services, principalOf(req).accountId, body.fileUrl, body.fileName), body.uploadPath);
    });
  });
}

/**
 * Reads the multipart parts in order: the file streams into the upload service at once, and the
 * fields (uploadPath, fileName) may come before or after it; the stored name waits for them.
 */
async function answerStream(services: Services, req: FastifyRequest, reply: FastifyReply) {
  if (!req.isMultipart()) throw Errors.missingField('file', STREAM_HINT);
  const fields = new Map<string, string>();
  let settleName!: { ok: (name: string | undefined) => void; fail: (e: unknown) => void };
  const name = new Promise<string | undefined>((ok, fail) => (settleName = { ok, fail }));
  name.catch(() => {}); // a failed read is reported below; the upload then fails on it
  let stored: Promise<StoredUpload> | undefined;
  // The upload only settles early by failing (it waits for the name), so it races each next part.
  let failed: Promise<never> | undefined;
  try {
    const parts = req.parts()[Symbol.asyncIterator]();
    for (;;) {
      const next = await (failed ? Promise.race([parts.next(), failed]) : parts.next());
      if (next.done) break;
      const part = next.value;
      if (part.type === 'field') {
        fields.set(part.fieldname, String(part.value));
        continue;
      }
      if (part.fieldname !== 'file' || stored) {
        part.file.resume();
        throw Errors.missingField('file', `${STREAM_HINT} (got a file in the field ${JSON.stringify(part.fieldname.slice(0, 100))})`);
      }
      const given = part.filename;
      const finalName = name.then((n) => n ?? given);
      finalName.catch(() => {}); // not awaited when the bytes are refused first
      stored = services.uploads.store(principalOf(req).accountId, part.file, finalName);
      failed = stored.then(() => new Promise<never>(() => {}));
      failed.catch(() => {});
    }
  } catch (e) {
    settleName.fail(e);
    await stored?.catch(() => {});
    throw clientError(e, reply, STREAM_HINT);
  }
  settleName.ok(fields.get('fileName') || undefined);
  if (!stored) throw Errors.missingField('file', STREAM_HINT);
  try {
    return answer(await stored, fields.get('uploadPath'));
  } catch (e) {
    throw clientError(e, reply, STREAM_HINT);
  }
}
