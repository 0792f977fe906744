import sharp from 'sharp';
import { ClassifierPool, type PoolOptions, type PoolStats } from './pool.js';
import { ModerationUnavailable } from './types.js';

/** Scores one image: the probability that it is sexual content (0..1). */
export interface ImageClassifier {
  score(bytes: Buffer, accountId?: string): Promise<number>;
  /** Takes one of the account's concurrent photo checks and returns its release; throws ModerationBusy when all are in use. */
  admit?(accountId: string): () => void;
}

/** The model's input side in pixels. */
const SIZE = 224;

/** The photo as the model reads it: flattened onto white (so transparent pixels do not read as black), 224x224 RGB. */
export async function modelPixels(bytes: Buffer): Promise<Uint8Array> {
  try {
    // sharp works on libuv's thread pool: decoding and resizing do not hold the event loop either.
    const raw = await sharp(bytes, { limitInputPixels: 100_000_000 })
      .flatten({ background: '#ffffff' })
      .resize(SIZE, SIZE, { fit: 'fill' })
      .removeAlpha()
      .raw()
      .toBuffer();
    return new Uint8Array(raw.buffer, raw.byteOffset, raw.byteLength);
  } catch {
    throw new ModerationUnavailable('is not an image GenGate can read (JPG, PNG or WebP)', true);
  }
}

/**
 * The local image classifier: nsfwjs's MobileNetV2 model, which ships inside the npm package
 * (nothing is downloaded), run by a ClassifierPool of worker threads on TensorFlow.js's
 * WebAssembly backend. The photo is decoded here; the model runs only in the workers.
 */
export class NsfwjsClassifier implements ImageClassifier {
  private readonly pool: ClassifierPool;

  constructor(options: Partial<PoolOptions> = {}) {
    this.pool = new ClassifierPool({ workers: 1, checksPerAccount: 2, queueMax: 64, ...options });
  }

  async score(bytes: Buffer, accountId = ''): Promise<number> {
    return this.pool.score(await modelPixels(bytes), accountId);
  }

  admit(accountId: string): () => void {
    return this.pool.admit(accountId);
  }

  /** Counters of the pool (photos scored, waiting, refused). */
  stats(): PoolStats {
    return this.pool.stats();
  }

  /** Stops the worker threads. */
  close(): Promise<void> {
    return this.pool.close();
  }
}
