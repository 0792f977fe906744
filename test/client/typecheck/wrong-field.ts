// Compiled by test/client/types.test.ts (and by the root typecheck): every line marked @ts-expect-error
// must be a compile error, or tsc reports the directive as unused and the test fails.
import { GenGate } from '../../../packages/client/src/index.js';

const gg = new GenGate({ apiKey: 'gg_x', baseUrl: 'http://127.0.0.1:8080' });

export async function wrong(): Promise<void> {
  // @ts-expect-error `promt` is not a field of nano-banana-2
  await gg.run('nano-banana-2', { promt: 'a lighthouse' });
  // @ts-expect-error `8K` is not a resolution of nano-banana-2
  await gg.run('nano-banana-2', { prompt: 'a lighthouse', resolution: '8K' });
  // @ts-expect-error `duration` takes 5, 10 or 15 for wan-3.0
  await gg.tasks.create('wan-3.0', { prompt: 'waves', duration: 7 });
}

export async function right(): Promise<void> {
  await gg.run('nano-banana-2', { prompt: 'a lighthouse', resolution: '2K' });
  await gg.run('seedance-2.5', { prompt: 'a fox in the snow', duration: '5', resolution: '720p' });
  await gg.run('google/nano-banana', { prompt: 'a cat', image_size: '16:9' });
  // A model the operator added is not in the generated types: any input object.
  await gg.run('my-own-model', { anything: true });
}
