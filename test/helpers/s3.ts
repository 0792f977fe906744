import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
// @ts-expect-error s3rver ships no types
import S3rver from 's3rver';
import { S3BlobStore } from '../../src/files/s3.js';

/** An in-process S3 emulator (s3rver) on a loopback port with one bucket; `env` holds the S3_* settings for it. */
export interface TestS3 {
  endpoint: string;
  bucket: string;
  env: Record<string, string>;
  /** A blob store of its own on the bucket, under `prefix` (close it after use). */
  store(prefix: string): S3BlobStore;
  close(): Promise<void>;
}

/** Starts s3rver on 127.0.0.1:0 over a temp folder with a fresh bucket (S3 itself is an external service, so it is emulated). */
export async function startS3(): Promise<TestS3> {
  const dir = mkdtempSync(path.join(tmpdir(), 'gengate-s3-'));
  const bucket = `gg-${randomBytes(4).toString('hex')}`;
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: dir, configureBuckets: [{ name: bucket }] });
  const { port } = (await server.run()) as { port: number };
  const endpoint = `http://127.0.0.1:${port}`;
  return {
    endpoint,
    bucket,
    // s3rver's default keys; path style because the bucket is not a host name here.
    env: {
      S3_ENDPOINT: endpoint,
      S3_BUCKET: bucket,
      S3_ACCESS_KEY_ID: 'S3RVER',
      S3_SECRET_ACCESS_KEY: 'S3RVER',
      S3_FORCE_PATH_STYLE: 'true',
      S3_CHECKSUMS: 'WHEN_REQUIRED',
    },
    store: (prefix) =>
      new S3BlobStore({
        bucket,
        region: 'us-east-1',
        endpoint,
        accessKeyId: 'S3RVER',
        secretAccessKey: 'S3RVER',
        forcePathStyle: true,
        checksums: 'WHEN_REQUIRED',
        prefix,
      }),
    close: async () => {
      await server.close().catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
