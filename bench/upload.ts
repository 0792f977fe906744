import { createReadStream } from 'node:fs';
import { mkdtemp, open, rm, stat } from 'node:fs/promises';
import { execFile } from 'node:child_process';
import { request } from 'node:http';
import path from 'node:path';
import { fileArg, runFfmpeg } from '../src/media/index.js';
import { rssMb } from './http.js';

const MB = 1024 * 1024;
const ROUNDS = Number(process.env.BENCH_UPLOAD_ROUNDS ?? 3);
/** Just under the default 200 MB video limit (UPLOAD_MAX_MEDIA_BYTES). */
const TARGET_BYTES = 195_000_000;

/** Figures of the upload benchmark (issue 5 targets: ratio ≥ 0.5, server memory growth < 64 MB; decision 0317: at most one full collection per upload). */
export interface UploadBench {
  name: string;
  fileMb: number;
  /** Disk write speed including fsync: the baseline. */
  diskMbPerSec: number;
  /** The same writes until the last one returned (page cache), for reference. */
  cachedWriteMbPerSec: number;
  uploadMbPerSec: number;
  ratio: number;
  /**
   * For information: the bare server's upload (the same multipart parser writing a new file, no
   * checks) in the same rounds, and GenGate's speed as a share of it.
   */
  bareMbPerSec?: number;
  ratioToBare?: number;
  rssGrowthMb: number;
  /** Full (mark-compact) collections of the server's heap per timed upload, from its /metrics (decision 0317). */
  fullGcsPerUpload: number;
  /** Each round's upload and disk speed, MB/s (the medians above come from these). */
  rounds: Array<{ uploadMbPerSec: number; diskMbPerSec: number; bareMbPerSec?: number }>;
  pass: boolean;
}

/** At most this many full collections per upload: a busy server without its heap setting ran 6-7 (decision 0317). */
export const MAX_FULL_GCS_PER_UPLOAD = 1;

/** The server's count of full (major) garbage collections so far, from prom-client's default metrics on /metrics. */
async function fullGcs(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  // The count is the guard of decision 0317: without the metric the line would pass on nothing.
  if (!/^# TYPE nodejs_gc_duration_seconds histogram$/m.test(text)) throw new Error('bench: /metrics shows no nodejs_gc_duration_seconds');
  // The series of a kind appears with its first collection.
  const m = /^nodejs_gc_duration_seconds_count\{kind="major"\} (\d+)/m.exec(text);
  return m ? Number(m[1]) : 0;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/**
 * Writes `bytes` from one reused buffer to the new file `file` in 1 MB writes: MB/s until the
 * last write returned (`cached`: what the page cache absorbs) and until fsync finished (`synced`:
 * what the disk sustains, the baseline of the target). The file is left for the caller to remove.
 */
async function diskSpeed(file: string, bytes: number): Promise<{ cached: number; synced: number }> {
  const chunk = Buffer.alloc(MB, 7);
  const handle = await open(file, 'w');
  try {
    const started = performance.now();
    for (let left = bytes; left > 0; left -= MB) await handle.write(left >= MB ? chunk : chunk.subarray(0, left));
    const written = performance.now();
    await handle.sync();
    const synced = performance.now();
    return { cached: bytes / MB / ((written - started) / 1000), synced: bytes / MB / ((synced - started) / 1000) };
  } finally {
    await handle.close();
  }
}

/** POSTs `file` to `url` as multipart field `file` with a known length from this process (when curl is missing); resolves with status and seconds. */
function postFileNode(url: string, key: string, file: string, size: number): Promise<{ status: number; seconds: number; body: string }> {
  // A boundary like curl's (24 dashes and 16 hex digits): the parser's search speed depends on its length.
  const boundary = '------------------------8f1e4c2a9b7d3e60';
  const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="bench.mp4"\r\nContent-Type: video/mp4\r\n\r\n`);
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = request(url, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': `multipart/form-data; boundary=${boundary}`,
        'content-length': String(head.length + size + tail.length),
      },
    });
    req.on('response', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, seconds: (performance.now() - started) / 1000, body }));
    });
    req.on('error', reject);
    req.write(head);
    const source = createReadStream(file, { highWaterMark: MB });
    source.on('error', reject);
    source.on('end', () => req.end(tail));
    source.pipe(req, { end: false });
  });
}

/**
 * POSTs `file` to `url` the way users do, with curl (a native client, so the figure is the server's and not
 * this process's JavaScript); falls back to a Node client when curl is not installed.
 */
function postFile(url: string, key: string, file: string, size: number): Promise<{ status: number; seconds: number; body: string }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const args = ['-sS', '-H', `Authorization: Bearer ${key}`, '-F', `file=@${file};type=video/mp4`, '-w', '\n%{http_code}', url];
    execFile('curl', args, { maxBuffer: 1024 * 1024 }, (err, stdout) => {
      if (err && (err as NodeJS.ErrnoException).code === 'ENOENT') return void postFileNode(url, key, file, size).then(resolve, reject);
      if (err) return void reject(err);
      const seconds = (performance.now() - started) / 1000;
      const cut = stdout.lastIndexOf('\n');
      resolve({ status: Number(stdout.slice(cut + 1)), seconds, body: stdout.slice(0, cut) });
    });
  });
}

/**
 * Uploading a ~200 MB MP4 to a running GenGate (pid `pid`) against the disk write speed (with fsync)
 * measured in the same run, with the server's RSS growth sampled every 10 ms; medians of BENCH_UPLOAD_ROUNDS (default 3) rounds after a warm-up.
 * With `bare` (the bare server's upload URL) each round also uploads there, after a disk measurement of its own.
 */
export async function benchUpload(server: { url: string; key: string; pid: number; dir: string; bare?: string }): Promise<UploadBench> {
  const dir = await mkdtemp(path.join(server.dir, 'bench-upload-'));
  const gengate = `${server.url}/api/v1/files/upload`;
  try {
    const video = path.join(dir, 'big.mp4');
    // Lossless noise does not compress, so a few seconds of 720p reach the size; -fs stops at it.
    await runFfmpeg(
      [
        '-f',
        'lavfi',
        '-i',
        'testsrc2=s=1280x720:r=30:d=30',
        '-vf',
        'noise=alls=60:allf=t+u',
        '-c:v',
        'libx264',
        '-preset',
        'ultrafast',
        '-qp',
        '0',
        '-pix_fmt',
        'yuv420p',
        '-fs',
        String(TARGET_BYTES),
        fileArg(video),
      ],
      'bench: make the upload video',
      { timeoutMs: 600_000 },
    );
    const size = (await stat(video)).size;
    const disk: number[] = [];
    const cached: number[] = [];
    // Each round's figures, MB/s; the disk figure is the one measured just before GenGate's upload.
    const rounds: Array<{ upload: number; disk: number; bare?: number }> = [];
    let gcs = 0;
    const upload = async (url: string): Promise<number> => {
      const r = await postFile(url, server.key, video, size);
      if (r.status !== 200) throw new Error(`bench upload to ${url} answered ${r.status}: ${r.body.slice(0, 300)}`);
      return size / MB / r.seconds;
    };
    // Memory growth counts from before the first upload, warm-up included, to the highest RSS seen.
    const base = rssMb(server.pid);
    let peak = base;
    const sampler = setInterval(() => (peak = Math.max(peak, rssMb(server.pid))), 10);
    try {
      // Warm-up, not timed: the first upload also pays for JIT-compiling the multipart parser.
      await postFile(gengate, server.key, video, size);
      if (server.bare) await postFile(server.bare, server.key, video, size);
      gcs -= await fullGcs(server.url);
      // Each upload comes right after a disk measurement, so both servers' uploads start alike (an
      // upload right after another ran at 190 against 300 MB/s on one VM, decision 0318).
      // Each disk measurement writes a new file, kept until the section ends as uploads are kept:
      // it then takes new pages of memory as an upload does (decision 0319).
      const measureDisk = async (): Promise<number> => {
        const d = await diskSpeed(path.join(dir, `disk-speed-${disk.length}.bin`), size);
        disk.push(d.synced);
        cached.push(d.cached);
        return d.synced;
      };
      for (let i = 0; i < ROUNDS; i++) {
        const round: (typeof rounds)[number] = { disk: await measureDisk(), upload: await upload(gengate) };
        if (server.bare) {
          await measureDisk();
          round.bare = await upload(server.bare);
        }
        rounds.push(round);
      }
      gcs += await fullGcs(server.url);
    } finally {
      clearInterval(sampler);
    }
    const diskMbPerSec = Math.round(median(disk));
    const uploadMbPerSec = Math.round(median(rounds.map((r) => r.upload)));
    const ratio = Math.round((uploadMbPerSec / diskMbPerSec) * 1000) / 1000;
    const rssGrowthMb = Math.round((peak - base) * 10) / 10;
    const cachedWriteMbPerSec = Math.round(median(cached));
    const fullGcsPerUpload = Math.round((gcs / ROUNDS) * 10) / 10;
    const bareMbPerSec = server.bare ? Math.round(median(rounds.map((r) => r.bare!))) : undefined;
    return {
      name: 'POST /api/v1/files/upload ~200 MB MP4',
      fileMb: Math.round(size / MB),
      diskMbPerSec,
      cachedWriteMbPerSec,
      uploadMbPerSec,
      ratio,
      bareMbPerSec,
      ratioToBare: bareMbPerSec ? Math.round((uploadMbPerSec / bareMbPerSec) * 1000) / 1000 : undefined,
      rssGrowthMb,
      fullGcsPerUpload,
      rounds: rounds.map((r) => ({
        uploadMbPerSec: Math.round(r.upload),
        diskMbPerSec: Math.round(r.disk),
        bareMbPerSec: r.bare === undefined ? undefined : Math.round(r.bare),
      })),
      pass: ratio >= 0.5 && rssGrowthMb < 64 && fullGcsPerUpload <= MAX_FULL_GCS_PER_UPLOAD,
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
