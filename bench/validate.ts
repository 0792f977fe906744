import { pathToFileURL } from 'node:url';
import { buildCatalog, validateInput, type MediaFacts } from '../src/catalog/index.js';
import { quote } from '../src/pricing/index.js';

/**
 * Micro-benchmark (issue 3 target: under 1 ms median): validating a maximal seedance-2.5 input —
 * 30 photo links, 10 videos, 10 audio files, a 30,000-character prompt — with upload facts for
 * every clip, then pricing it, as createTask will.
 */

const BASE = 'https://gengate.example.com';

function maximalInput(): { input: Record<string, unknown>; media: MediaFacts } {
  const videos = Array.from({ length: 10 }, (_, i) => `${BASE}/files/${'v'.repeat(22)}${i}/clip-${i}.mp4`);
  const audios = Array.from({ length: 10 }, (_, i) => `${BASE}/files/${'a'.repeat(22)}${i}/track-${i}.mp3`);
  const media: Record<string, { kind: 'video' | 'audio'; format: string; seconds: number }> = {};
  for (const v of videos) media[v] = { kind: 'video', format: 'MP4', seconds: 3 };
  for (const a of audios) media[a] = { kind: 'audio', format: 'MP3', seconds: 3 };
  const prompt = 'A slow dolly shot across a rain-soaked neon street at night; '.repeat(500).slice(0, 30_000);
  return {
    input: {
      prompt,
      image_urls: Array.from({ length: 30 }, (_, i) => `https://images.example.com/refs/${i}/photo-${i}.jpg`),
      video_urls: videos,
      audio_urls: audios,
      video_mode: 'reference',
      resolution: '1080p',
      aspect_ratio: '16:9',
      duration: '12',
      generate_audio: true,
      seed: '123456',
      tools: [{ type: 'web_search' }],
      trim_video_to: 10,
    },
    media,
  };
}

/** The maximal input as a kie.ai client sends it under `bytedance/seedance-2-5` (decision 0400). */
function kieShaped(input: Record<string, unknown>): Record<string, unknown> {
  const { image_urls, video_urls, audio_urls, ...rest } = input;
  return { ...rest, reference_image_urls: image_urls, reference_video_urls: video_urls, reference_audio_urls: audio_urls, nsfw_checker: false };
}

/** Median milliseconds of validating (and pricing) the maximal input; `kie`: the same input under its kie.ai id and names. */
export async function benchValidate(kie = false): Promise<{ name: string; medianMs: number }> {
  const catalog = buildCatalog();
  const maximal = maximalInput();
  const { media } = maximal;
  const input = kie ? kieShaped(maximal.input) : maximal.input;
  const name = kie ? 'bytedance/seedance-2-5' : 'seedance-2.5';
  const run = () => {
    const v = validateInput(catalog, name, input, media, { uploadBaseUrl: BASE });
    return quote(catalog, v.model, v.input, v.media?.facts).priceMicros;
  };
  for (let i = 0; i < 500; i++) run(); // warm up the JIT
  const samples: number[] = [];
  for (let i = 0; i < 3000; i++) {
    const t = process.hrtime.bigint();
    run();
    samples.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  samples.sort((a, b) => a - b);
  return { name: `validate + quote maximal seedance-2.5 input${kie ? ' (kie.ai names)' : ''}`, medianMs: samples[Math.floor(samples.length / 2)]! };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const r = await benchValidate();
  process.stdout.write(`${r.name}: median ${r.medianMs.toFixed(4)} ms (target < 1 ms)\n`);
  const k = await benchValidate(true);
  process.stdout.write(`${k.name}: median ${k.medianMs.toFixed(4)} ms, ${(k.medianMs / r.medianMs).toFixed(2)}× the GenGate names in this run\n`);
}
