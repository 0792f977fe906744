import { rm } from 'node:fs/promises';
import { Transform, type Readable, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { SNIFF_BYTES, sniff, type Sniffed } from '../media/index.js';
import { FileSink } from './sink.js';

/** Byte limits of uploads by kind (DECISIONS §10: images 30 MB, video and audio 200 MB). */
export interface UploadLimits {
  imageBytes: number;
  mediaBytes: number;
}

/** Why a received stream was refused before it was fully stored. */
export class ReceiveRefusal extends Error {
  constructor(
    readonly why: 'unsupported' | 'too_large' | 'empty',
    message: string,
  ) {
    super(message);
    this.name = 'ReceiveRefusal';
  }
}

const MB = 1024 * 1024;
/**
 * Bytes each stage may hold before it pushes back, and the size of the file's writes: with the
 * 16 KB default every 64 KB socket read paused the socket; 1 MB lets reading go on while a write is
 * out. Not more: with 4 MB per stage the server spent about 100 ms more CPU on a ~200 MB upload,
 * and received it slower (decision 0316). The writes go out in 1 MB batches (decision 0319).
 */
const BUFFER_BYTES = 1 * MB;
const inMb = (n: number) => `${Math.round((n / MB) * 10) / 10} MB`;

/**
 * Counts bytes while they pass, decides the type from the first bytes (refusing at once what is
 * not an accepted format) and stops the stream as soon as the limit of that kind is passed, so an
 * oversize body is never stored whole and memory holds only one chunk at a time.
 */
class Gate extends Transform {
  bytes = 0;
  type: Sniffed | null = null;
  private head: Buffer[] = [];
  private headBytes = 0;

  constructor(private readonly limits: UploadLimits) {
    super({ highWaterMark: BUFFER_BYTES });
  }

  private limit(): number {
    if (!this.type) return Math.max(this.limits.imageBytes, this.limits.mediaBytes);
    return this.type.kind === 'image' ? this.limits.imageBytes : this.limits.mediaBytes;
  }

  private decide(): void {
    const first = Buffer.concat(this.head);
    this.head = [];
    this.type = sniff(first);
    if (!this.type) throw refusal('unsupported');
    // The first bytes may already be over the limit of their kind (one large chunk: a decoded base64 slice).
    if (this.bytes > this.limit()) throw tooLarge(this.type, this.limit());
    this.push(first);
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    try {
      this.bytes += chunk.length;
      if (this.bytes > this.limit()) throw tooLarge(this.type, this.limit());
      if (this.type) {
        this.push(chunk);
      } else {
        this.head.push(chunk);
        this.headBytes += chunk.length;
        if (this.headBytes >= SNIFF_BYTES) this.decide();
      }
      done();
    } catch (e) {
      done(e as Error);
    }
  }

  override _flush(done: TransformCallback): void {
    try {
      if (this.bytes === 0) throw new ReceiveRefusal('empty', 'file is empty (0 bytes); send a JPG, PNG, WebP, MP4, MOV, MP3 or WAV file');
      if (!this.type) this.decide();
      done();
    } catch (e) {
      done(e as Error);
    }
  }
}

function refusal(why: 'unsupported'): ReceiveRefusal {
  return new ReceiveRefusal(
    why,
    'file must be a JPG, PNG or WebP photo, an MP4 or MOV video, or an MP3 or WAV audio file, judged by its content (got a file of another type)',
  );
}

function tooLarge(type: Sniffed | null, limit: number): ReceiveRefusal {
  const what = type ? `${type.kind === 'image' ? 'a photo' : `a ${type.kind} file`} (${type.format.toUpperCase()})` : 'a file';
  return new ReceiveRefusal('too_large', `file must be at most ${inMb(limit)} for ${what} (got more than ${inMb(limit)}; the upload was cut off)`);
}

/**
 * Streams `source` into the file `dst` under the limits; returns the sniffed type and size. On any
 * failure the partly written file is removed and the error (ReceiveRefusal for the client's part) rethrown.
 */
export async function receive(source: Readable, dst: string, limits: UploadLimits): Promise<{ type: Sniffed; bytes: number }> {
  const gate = new Gate(limits);
  try {
    await pipeline(source, gate, new FileSink(dst, BUFFER_BYTES));
  } catch (e) {
    await rm(dst, { force: true });
    throw e;
  }
  return { type: gate.type!, bytes: gate.bytes };
}
