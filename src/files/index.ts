/** Stored files: the blob store, file rows and links, and the media facts of uploaded links. */
export { DiskBlobStore, type BlobStore, type SignedLinkOptions } from './blobs.js';
// The S3 store (src/files/s3.ts) is imported on demand: the AWS SDK costs ~150 ms to load.
export { Files, linkName, type Recorded, type StoredFile, type OpenFile, type OwnedRefusal, type TokenSealer } from './files.js';
export { UploadFacts, type MediaFactsResolver } from './facts.js';
export { FileSink } from './sink.js';
export {
  Uploads,
  safeFileName,
  safeFolder,
  MAX_UPLOAD_SECONDS,
  UPLOAD_RETENTION_MS,
  type UploadResult,
  type UploadSettings,
  type StoredUpload,
} from './upload.js';

/** The S3 blob store, loaded on demand: processes on the disk store never load the AWS SDK. */
export async function loadS3BlobStore() {
  return (await import('./s3.js')).S3BlobStore;
}
