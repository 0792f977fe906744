// The image classifier's worker thread (ClassifierPool starts it). Plain JavaScript so that it runs
// the same under node, tsx and vitest. It loads nsfwjs's MobileNetV2 model (shipped inside the npm
// package) on its first photo, on TensorFlow.js's WebAssembly backend (its .wasm files ship inside
// @tensorflow/tfjs-backend-wasm), about ten times faster than the pure-JavaScript CPU backend.
// Messages in: { id, pixels: Uint8Array of SIZE x SIZE x 3 RGB }; out: { id, score, ms } or { id, error }.
import { parentPort, workerData } from 'node:worker_threads';

const SIZE = 224;
let loading = null;

async function load() {
  const tf = await import('@tensorflow/tfjs');
  let backend = workerData?.backend ?? 'wasm';
  if (backend === 'wasm') {
    const wasm = await import('@tensorflow/tfjs-backend-wasm');
    // One thread per worker: the pool's size is the parallelism the operator chose.
    wasm.setThreadsCount(1);
  }
  if (!(await tf.setBackend(backend))) throw new Error(`the ${backend} backend did not start`);
  await tf.ready();
  const { load: loadModel } = await import('nsfwjs/core');
  const { MobileNetV2Model } = await import('nsfwjs/models/mobilenet_v2');
  const model = await loadModel('MobileNetV2', { modelDefinitions: [MobileNetV2Model] });
  return { tf, model };
}

async function score(pixels) {
  loading ??= load();
  const { tf, model } = await loading;
  const img = tf.tensor3d(pixels, [SIZE, SIZE, 3], 'int32');
  try {
    const predictions = await model.classify(img);
    const p = (name) => predictions.find((x) => x.className === name)?.probability ?? 0;
    return p('Porn') + p('Hentai');
  } finally {
    img.dispose();
  }
}

parentPort.on('message', async ({ id, pixels }) => {
  try {
    loading ??= load();
    await loading;
    // Timed without the model load: the pool's Retry-After estimate wants the time per photo.
    const started = performance.now();
    const value = await score(pixels);
    parentPort.postMessage({ id, score: value, ms: performance.now() - started });
  } catch (e) {
    parentPort.postMessage({ id, error: e instanceof Error ? e.message : String(e) });
  }
});
