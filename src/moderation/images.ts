import sharp from 'sharp';
import { ModerationUnavailable } from './types.js';

/** Scores one image: the probability that it is sexual content (0..1). */
export interface ImageClassifier {
  score(bytes: Buffer): Promise<number>;
}

type Model = { classify(img: unknown): Promise<Array<{ className: string; probability: number }>> };
type Tf = typeof import('@tensorflow/tfjs');

/**
 * The local image classifier: nsfwjs's MobileNetV2 model, which ships inside the npm package
 * (nothing is downloaded), on TensorFlow.js's pure-JavaScript CPU backend. Loaded on first use;
 * a load failure is remembered and reported on every check (fail closed unless configured).
 */
export class NsfwjsClassifier implements ImageClassifier {
  private loading: Promise<{ tf: Tf; model: Model }> | null = null;

  /** Loads the model now (optional: the first check loads it otherwise). */
  warm(): Promise<unknown> {
    return this.load();
  }

  async score(bytes: Buffer): Promise<number> {
    const { tf, model } = await this.load();
    let raw: { data: Buffer; info: { width: number; height: number } };
    try {
      // Flattened onto white so transparent pixels do not read as black; 224x224 is the model's input.
      raw = await sharp(bytes, { limitInputPixels: 100_000_000 }).flatten({ background: '#ffffff' }).resize(224, 224, { fit: 'fill' }).removeAlpha().raw().toBuffer({ resolveWithObject: true });
    } catch {
      throw new ModerationUnavailable('is not an image GenGate can read (JPG, PNG or WebP)', true);
    }
    const img = tf.tensor3d(new Uint8Array(raw.data), [raw.info.height, raw.info.width, 3], 'int32');
    try {
      const predictions = await model.classify(img);
      const p = (name: string) => predictions.find((x) => x.className === name)?.probability ?? 0;
      return p('Porn') + p('Hentai');
    } finally {
      img.dispose();
    }
  }

  private load(): Promise<{ tf: Tf; model: Model }> {
    this.loading ??= (async () => {
      try {
        const tf = await import('@tensorflow/tfjs');
        await tf.setBackend('cpu');
        await tf.ready();
        const { load } = await import('nsfwjs/core');
        const { MobileNetV2Model } = await import('nsfwjs/models/mobilenet_v2');
        const model = (await load('MobileNetV2', { modelDefinitions: [MobileNetV2Model] })) as unknown as Model;
        return { tf, model };
      } catch (e) {
        throw new ModerationUnavailable(`the image classifier could not be loaded (${(e as Error).message})`, false);
      }
    })();
    return this.loading;
  }
}
