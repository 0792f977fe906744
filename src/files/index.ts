/** Stored files: the blob store, file rows and links, and the media facts of uploaded links. */
export { DiskBlobStore, type BlobStore, type SignedLinkOptions } from './blobs.js';
export { S3BlobStore, type S3Settings } from './s3.js';
export { Files, type StoredFile, type OpenFile } from './files.js';
export { UploadFacts, type MediaFactsResolver } from './facts.js';
export { Uploads, safeFileName, MAX_UPLOAD_SECONDS, UPLOAD_RETENTION_MS, type UploadResult, type UploadSettings } from './upload.js';
