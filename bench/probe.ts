import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { renderVideo } from '../src/backends/local/render.js';
import { probe } from '../src/media/index.js';

const RUNS = 15;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Median time to probe a 30 s 720p MP4 with audio (issue 5 target: under 200 ms), over 15 runs after a warm-up. */
export async function benchProbe(): Promise<{ name: string; medianMs: number }> {
  const dir = await mkdtemp(path.join(tmpdir(), 'gengate-bench-probe-'));
  try {
    const file = path.join(dir, 'clip.mp4');
    await renderVideo({ resolution: '720p', aspectRatio: '16:9', seconds: 30, withAudio: true, seed: 1 }, file);
    await probe(file); // warm-up: page cache and the binary's first start
    const times: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const started = performance.now();
      await probe(file);
      times.push(performance.now() - started);
    }
    return { name: 'probe 30 s MP4 (median of 15)', medianMs: Math.round(median(times) * 10) / 10 };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

// `npx tsx bench/probe.ts` runs it alone.
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  console.log(await benchProbe());
}
