import { z } from 'zod';
import type { Operation } from '../operation.js';
import * as S from '../schemas.js';

/**
 * kie.ai's three upload endpoints (KIE.md §3, DECISIONS §18), at the root of GenGate's address: their
 * request schemas and specs. The routes are Fastify-shaped like /api/v1/files/upload (http/routes/kie-upload.ts).
 */

const folderAndName = {
  uploadPath: z.string().max(1000).optional().describe('Folder of filePath (sanitised: no "." or ".." parts, only A-Z a-z 0-9 . _ -, at most 5 parts)'),
  fileName: z.string().max(1000).optional().describe('Name of the stored file (sanitised like /api/v1/files/upload; the extension follows the bytes)'),
};
/** JSON body of POST /api/file-base64-upload. */
export const base64UploadBody = z.object({
  base64Data: z.string().describe('The file as base64, raw or as a data: URL (data:image/png;base64,...)'),
  ...folderAndName,
});
/** JSON body of POST /api/file-url-upload. */
export const urlUploadBody = z.object({ fileUrl: z.string().max(8192).describe('An http(s) link GenGate downloads the file from'), ...folderAndName });
/** Multipart fields of POST /api/file-stream-upload (for the document; the route reads the parts in order). */
const streamUploadBody = z.object({ file: z.string().describe('The file (binary)'), ...folderAndName });

const RULES =
  'The upload service of /api/v1/files/upload: the same kinds, limits, 24-hour retention and write budget. Every refusal (a missing or wrong key too) is GenGate\'s error envelope with `success: false` first, e.g. {"success": false, "code": 422, "msg": "...", "data": null, "error": "validation_error"}.';

function spec(path: string, id: string, summary: string, body: z.ZodType, extra: Partial<Operation> = {}): Operation {
  return {
    method: 'post',
    path,
    id,
    tag: 'kie.ai compatibility',
    auth: 'key',
    scope: 'files:write',
    summary,
    description: RULES,
    body,
    ok: { schema: S.KieUpload, description: "kie.ai's upload answer; use data.downloadUrl in model inputs" },
    errors: ['missing_field', 'upload_rejected', 'invalid_request'],
    ...extra,
  };
}

/** The specs of the three upload endpoints, in the order of the OpenAPI document. */
export const KIE_UPLOADS: Operation[] = [
  spec('/api/file-stream-upload', 'kieStreamUpload', 'kie.ai upload: multipart file, uploadPath, optional fileName', streamUploadBody, {
    bodyType: 'multipart/form-data',
  }),
  spec('/api/file-base64-upload', 'kieBase64Upload', 'kie.ai upload: the file as base64 text or a data: URL', base64UploadBody),
  spec('/api/file-url-upload', 'kieUrlUpload', 'kie.ai upload: GenGate downloads the file from fileUrl', urlUploadBody, {
    description: `${RULES} The download goes through the network guard (no private addresses unless ALLOW_PRIVATE_NETWORK, 400), with the upload size limit and a 120 s deadline.`,
  }),
];
