// Issue 17 items 2 and 8: memory of the largest accepted video upload, and probe time with each ffprobe found.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { renderVideo } from '../src/backends/local/render.js';
import { DEFAULT_VIDEO_LIMITS, fileArg, probe, runFfmpeg, setBinary } from '../src/media/index.js';
import { startProcess, stopProcess } from './http.js';

/** Issue 17 item 2: the server and its children stay under this while converting the largest accepted upload. */
const MAX_PEAK_MB = 512;
/** Issue 5 / 17 item 8: median probe of a 30 s 720p MP4. */
const MAX_PROBE_MS = 200;
const PROBES = 15;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** A process and all its descendants (Linux /proc). */
function tree(pid: number): number[] {
  const out = [pid];
  for (let i = 0; i < out.length; i++) {
    const tasks = `/proc/${out[i]}/task`;
    if (!existsSync(tasks)) continue;
    for (const task of readdirSync(tasks)) {
      try {
        const children = readFileSync(`${tasks}/${task}/children`, 'utf8').trim();
        if (children) out.push(...children.split(/\s+/).map(Number));
      } catch {
        // the process ended while being read
      }
    }
  }
  return out;
}

/** Resident memory of a process and its descendants in MB, and which commands they run. */
function treeRss(pid: number): { mb: number; commands: string[] } {
  let kb = 0;
  const commands: string[] = [];
  for (const p of tree(pid)) {
    try {
      kb += Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${p}/status`, 'utf8'))?.[1] ?? 0);
      commands.push(readFileSync(`/proc/${p}/comm`, 'utf8').trim());
    } catch {
      // gone
    }
  }
  return { mb: kb / 1024, commands };
}

/** POSTs a file with curl; resolves with the HTTP status and the answer. */
function post(url: string, key: string, file: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const args = ['-sS', '-H', `Authorization: Bearer ${key}`, '-F', `file=@${file}`, '-w', '\n%{http_code}', `${url}/api/v1/files/upload`];
    execFile('curl', args, { maxBuffer: 1024 * 1024 }, (err, stdout) => {
      if (err) return reject(err);
      const cut = stdout.lastIndexOf('\n');
      resolve({ status: Number(stdout.slice(cut + 1)), body: stdout.slice(0, cut) });
    });
  });
}

/** Figures of the upload memory bench. */
export interface UploadMemoryBench {
  name: string;
  ffmpeg: string;
  threads: string;
  baseMb: number;
  peakMb: number;
  seconds: number;
  pass: boolean;
}

/**
 * Uploads the largest video the default limits accept that must be re-encoded (a MOV of Motion
 * JPEG at 4096×2160, so the MP4 conversion decodes and encodes every frame) to a fresh server and
 * samples the resident memory of the server and all its children every 10 ms.
 */
export async function benchUploadMemory(env: Record<string, string> = {}): Promise<UploadMemoryBench> {
  const dir = mkdtempSync(path.join(tmpdir(), 'gengate-bench-media-'));
  const { maxSide, maxPixels } = DEFAULT_VIDEO_LIMITS;
  const size = `${maxSide}x${Math.floor(maxPixels / maxSide)}`;
  const video = path.join(dir, 'largest.mov');
  await runFfmpeg(
    ['-f', 'lavfi', '-i', `testsrc2=s=${size}:r=30:d=2`, '-c:v', 'mjpeg', '-q:v', '5', '-f', 'mov', fileArg(video)],
    'bench: make the largest accepted upload',
    { timeoutMs: 600_000 },
  );
  const server = await startProcess(
    ['src/main.ts', 'serve'],
    { DATA_DIR: dir, PORT: '0', RUN_ENGINE: 'false', LOG_LEVEL: 'warn', ...env },
    path.join(dir, 'server.log'),
  );
  try {
    const key = readFileSync(path.join(dir, 'first-api-key.txt'), 'utf8').trim();
    const pid = server.child.pid!;
    const base = treeRss(pid).mb;
    let peak = base;
    const sampler = setInterval(() => (peak = Math.max(peak, treeRss(pid).mb)), 10);
    const started = performance.now();
    const r = await post(server.url, key, video).finally(() => clearInterval(sampler));
    const seconds = Math.round((performance.now() - started) / 100) / 10;
    if (r.status !== 200) throw new Error(`bench upload answered ${r.status}: ${r.body.slice(0, 300)}`);
    const media = /^media: ffmpeg (\S+)/m.exec(readFileSync(path.join(dir, 'server.log'), 'utf8'))?.[1] ?? '?';
    const peakMb = Math.round(peak);
    return {
      name: `upload ${size} MJPEG MOV (2 s, 30 fps) -> MP4, server + children peak RSS`,
      ffmpeg: media,
      threads: env.MEDIA_THREADS ?? '2 (default)',
      baseMb: Math.round(base),
      peakMb,
      seconds,
      pass: peakMb < MAX_PEAK_MB,
    };
  } finally {
    await stopProcess(server.child);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Every ffprobe this host has: on PATH and the npm package's. */
function ffprobes(): Array<{ name: string; file: string }> {
  const found: Array<{ name: string; file: string }> = [];
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    const file = path.join(dir, 'ffprobe');
    if (dir && path.isAbsolute(dir) && existsSync(file)) {
      found.push({ name: `system ${file}`, file });
      break;
    }
  }
  try {
    const file = (createRequire(import.meta.url)('@ffprobe-installer/ffprobe') as { path: string }).path;
    if (existsSync(file)) found.push({ name: `npm ${file}`, file });
  } catch {
    // not shipped for this platform
  }
  return found;
}

/** Median probe time of a 30 s 720p MP4 with sound, with each ffprobe found (issue 17 item 8: both under 200 ms). */
export async function benchProbeBinaries(): Promise<Array<{ name: string; medianMs: number; pass: boolean }>> {
  const dir = mkdtempSync(path.join(tmpdir(), 'gengate-bench-probes-'));
  try {
    const file = path.join(dir, 'clip.mp4');
    await renderVideo({ resolution: '720p', aspectRatio: '16:9', seconds: 30, withAudio: true, seed: 1 }, file);
    const out: Array<{ name: string; medianMs: number; pass: boolean }> = [];
    for (const tool of ffprobes()) {
      setBinary('ffprobe', tool.file);
      await probe(file);
      const times: number[] = [];
      for (let i = 0; i < PROBES; i++) {
        const started = performance.now();
        await probe(file);
        times.push(performance.now() - started);
      }
      const medianMs = Math.round(median(times) * 10) / 10;
      out.push({ name: `probe 30 s MP4 with ${tool.name}`, medianMs, pass: medianMs <= MAX_PROBE_MS });
    }
    return out;
  } finally {
    setBinary('ffprobe', null);
    rmSync(dir, { recursive: true, force: true });
  }
}

// `npx tsx bench/media.ts` runs it alone; BENCH_FFMPEG_PATH picks the server's ffmpeg.
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const env: Record<string, string> = process.env.BENCH_FFMPEG_PATH ? { FFMPEG_PATH: process.env.BENCH_FFMPEG_PATH } : {};
  const memory = await benchUploadMemory(env);
  console.log(memory, memory.pass ? 'PASS' : 'FAIL');
  for (const p of await benchProbeBinaries()) console.log(p.name.padEnd(100), `median ${p.medianMs} ms (limit ${MAX_PROBE_MS})`, p.pass ? 'PASS' : 'FAIL');
}
