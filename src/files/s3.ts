import { createReadStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { PassThrough, Readable } from 'node:stream';
import { DeleteObjectCommand, GetObjectCommand, HeadBucketCommand, HeadObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { BlobStore, SignedLinkOptions } from './blobs.js';

/** How to reach the bucket; built from the S3_* settings in buildServices. */
export interface S3Settings {
  bucket: string;
  region: string;
  /** Custom endpoint of an S3-compatible server (MinIO, R2, ...); AWS when absent. */
  endpoint?: string;
  /** Explicit keys; the SDK's default credential chain when absent. */
  accessKeyId?: string;
  secretAccessKey?: string;
  forcePathStyle: boolean;
  /** WHEN_REQUIRED for servers that do not know the newer default checksums. */
  checksums: 'WHEN_SUPPORTED' | 'WHEN_REQUIRED';
  /** Optional key prefix, so one bucket can hold several installations. */
  prefix?: string;
}

/** Files above this size go up in parts (lib-storage), 8 MiB each, 4 at a time. */
const PART_BYTES = 8 * 1024 * 1024;

/** Blobs as objects in an S3-compatible bucket: streamed (multipart) uploads, ranged reads, presigned links. */
export class S3BlobStore implements BlobStore {
  readonly client: S3Client;

  constructor(private readonly settings: S3Settings) {
    this.client = new S3Client({
      region: settings.region,
      endpoint: settings.endpoint,
      forcePathStyle: settings.forcePathStyle,
      credentials:
        settings.accessKeyId && settings.secretAccessKey ? { accessKeyId: settings.accessKeyId, secretAccessKey: settings.secretAccessKey } : undefined,
      requestChecksumCalculation: settings.checksums,
      responseChecksumValidation: settings.checksums,
    });
  }

  private key(key: string): string {
    return (this.settings.prefix ?? '') + key;
  }

  async putFile(key: string, src: string, opts: { move?: boolean } = {}): Promise<void> {
    // lib-storage sends one PUT for small files and a multipart upload for large ones, streaming either way.
    const upload = new Upload({
      client: this.client,
      params: { Bucket: this.settings.bucket, Key: this.key(key), Body: createReadStream(src) },
      partSize: PART_BYTES,
      queueSize: 4,
      leavePartsOnError: false,
    });
    await upload.done();
    if (opts.move) await rm(src, { force: true });
  }

  async putBytes(key: string, bytes: Buffer): Promise<void> {
    await this.client.send(new PutObjectCommand({ Bucket: this.settings.bucket, Key: this.key(key), Body: bytes }));
  }

  read(key: string, range?: { start: number; end: number }): Readable {
    // The interface hands back a stream at once; the object's body is piped in when S3 answers.
    const out = new PassThrough();
    const cmd = new GetObjectCommand({ Bucket: this.settings.bucket, Key: this.key(key), Range: range ? `bytes=${range.start}-${range.end}` : undefined });
    this.client.send(cmd).then(
      (res) => {
        const body = res.Body as Readable | undefined;
        // A HEAD request or a client that left already closed `out`: let the connection go.
        if (out.destroyed) return body?.destroy();
        if (!body) return out.end();
        body.on('error', (e) => out.destroy(e));
        out.on('close', () => body.destroy());
        body.pipe(out);
      },
      (e) => out.destroy(e as Error),
    );
    return out;
  }

  async size(key: string): Promise<number | null> {
    try {
      const res = await this.client.send(new HeadObjectCommand({ Bucket: this.settings.bucket, Key: this.key(key) }));
      return res.ContentLength ?? 0;
    } catch (e) {
      const status = (e as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
      if (status === 404 || (e as Error).name === 'NotFound' || (e as Error).name === 'NoSuchKey') return null;
      throw e;
    }
  }

  async delete(key: string): Promise<void> {
    // S3 answers 204 for a missing key too, so deleting twice is fine.
    await this.client.send(new DeleteObjectCommand({ Bucket: this.settings.bucket, Key: this.key(key) }));
  }

  async signedLink(key: string, opts: SignedLinkOptions): Promise<string> {
    const cmd = new GetObjectCommand({
      Bucket: this.settings.bucket,
      Key: this.key(key),
      ResponseContentType: opts.mime,
      ResponseContentDisposition: `inline; filename="${opts.fileName}"`,
    });
    return getSignedUrl(this.client, cmd, { expiresIn: Math.max(1, Math.floor(opts.expiresInSeconds)) });
  }

  /** Throws unless the bucket exists and the keys may use it (a missing object cannot tell that). */
  async ping(): Promise<void> {
    await this.client.send(new HeadBucketCommand({ Bucket: this.settings.bucket }));
  }

  close(): void {
    this.client.destroy();
  }
}
