/** What upstream adapters share: the NotAccepted signal, their options, and HTTP through the network guard. */
export { NotAccepted, type UpstreamOptions } from './types.js';
export {
  UpstreamHttp,
  notAccepted,
  retryAfterMs,
  detail,
  type JsonRequest,
  type JsonResponse,
  type UploadRequest,
  type DownloadRequest,
  type UpstreamHttpOptions,
} from './http.js';
export { swapOwnLinks, type SendFile, type OwnLinkOptions } from './own-links.js';
export { DoneRecords } from './done.js';
