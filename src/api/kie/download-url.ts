import { z } from 'zod';
import { Errors, parseWith } from '../../errors.js';
import type { KeyedOperation } from '../operation.js';

/** How long a download link works (kie.ai: 20 minutes), at most until the file expires. */
export const DOWNLOAD_LINK_MS = 20 * 60 * 1000;

/** Body of POST /api/v1/common/download-url. */
export const downloadUrlBody = z.object({ url: z.string().max(8192).describe('A file link GenGate gave this account (upload or task result)') });

/**
 * POST /api/v1/common/download-url (kie.ai, KIE.md §3): for a file link of the caller's account, a
 * link to the same bytes that works 20 minutes (at most until the file expires); 422 otherwise.
 */
export const downloadUrl: KeyedOperation = {
  spec: {
    method: 'post',
    path: '/api/v1/common/download-url',
    id: 'kieDownloadUrl',
    tag: 'kie.ai compatibility',
    auth: 'key',
    scope: 'tasks:read',
    summary: "kie.ai's download link: a link to one of the account's files that works 20 minutes",
    description:
      "The link is {PUBLIC_BASE_URL}/files/dl/<sealed token>/<name>; it answers like /files/<id>/<name> and 404 once 20 minutes (or the file) have passed. 422 for a link that is not a file link of this service, another account's, or expired.",
    body: downloadUrlBody,
    ok: { schema: z.string().describe('The download link'), envelope: true, description: 'The download link' },
    errors: ['missing_field', 'invalid_request', 'upload_rejected'],
  },
  handler:
    (services) =>
    async ({ principal, body }) => {
      const { url } = parseWith(downloadUrlBody, body, '');
      const file = await services.files.owned(url, principal.accountId);
      if (file === 'foreign') {
        throw Errors.uploadRejected(`url must be a file link of this service ({PUBLIC_BASE_URL}/files/<id>/<name>) (got ${JSON.stringify(url.slice(0, 200))})`);
      }
      if (file === 'unknown') throw Errors.uploadRejected('url must be a file link of this account that has not expired (files are kept 24 hours)');
      return { data: services.files.downloadLink(file.id, file.name, Math.min(file.expiresAt, services.clock.now() + DOWNLOAD_LINK_MS)) };
    },
};
