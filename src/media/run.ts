import { spawn } from 'node:child_process';
import path from 'node:path';
import { resolveBinary, type Tool } from './binaries.js';

/** Why a media operation failed; `unreadable` (not media we can read) and `too_large` (over the video limits) are the input's fault. */
export type MediaFailure = 'missing_binary' | 'timeout' | 'aborted' | 'failed' | 'unreadable' | 'bad_output' | 'too_large';

/** A failed media operation: `op` says what was attempted, `stderr` holds the tool's last words. */
export class MediaError extends Error {
  constructor(
    readonly op: string,
    readonly reason: MediaFailure,
    /** What went wrong, without `op` (which names server paths). */
    readonly detail: string,
    readonly stderr = '',
  ) {
    super(`${op}: ${detail}`);
    this.name = 'MediaError';
  }
}

export interface RunOptions {
  /** Kill the process after this long (default 120 s). */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Stdout beyond this is an error (default 8 MiB); ffprobe JSON is small, runaway output is a bug. */
  maxStdoutBytes?: number;
}

export interface RunResult {
  stdout: Buffer;
  stderr: string;
  ms: number;
}

const STDERR_KEEP = 8 * 1024;
const DEFAULT_TIMEOUT_MS = 120_000;

/** The last meaningful stderr line, for an error message that fits on one line. */
function lastLine(stderr: string): string {
  const lines = stderr
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter(Boolean);
  return lines.at(-1) ?? '';
}

/** Runs ffmpeg or ffprobe with argv (no shell), a timeout and a bounded stderr tail; rejects with MediaError naming `op`. */
export function runTool(tool: Tool, args: readonly string[], op: string, options: RunOptions = {}): Promise<RunResult> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxStdout = options.maxStdoutBytes ?? 8 * 1024 * 1024;
  let binary: string;
  try {
    binary = resolveBinary(tool).path;
  } catch (e) {
    return Promise.reject(new MediaError(op, 'missing_binary', (e as Error).message));
  }
  if (options.signal?.aborted) return Promise.reject(new MediaError(op, 'aborted', `${tool} was not started: aborted`));

  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'], windowsHide: true });
    const chunks: Buffer[] = [];
    let stdoutBytes = 0;
    let stderr = '';
    let failure: MediaError | null = null;

    const stop = (error: MediaError) => {
      failure ??= error;
      child.kill('SIGKILL');
    };
    const timer = setTimeout(() => stop(new MediaError(op, 'timeout', `${tool} took longer than ${timeoutMs} ms and was killed`, stderr)), timeoutMs);
    const onAbort = () => stop(new MediaError(op, 'aborted', `${tool} was aborted`, stderr));
    options.signal?.addEventListener('abort', onAbort, { once: true });

    child.stdout.on('data', (chunk: Buffer) => {
      stdoutBytes += chunk.length;
      if (stdoutBytes > maxStdout) {
        stop(new MediaError(op, 'bad_output', `${tool} wrote more than ${maxStdout} bytes to stdout`));
      } else chunks.push(chunk);
    });
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (text: string) => {
      // Keep only the tail: ffmpeg can log a line per frame, and the end says what went wrong.
      stderr += text;
      if (stderr.length > 2 * STDERR_KEEP) stderr = stderr.slice(-STDERR_KEEP);
    });

    const finish = () => {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
    };
    child.on('error', (e: NodeJS.ErrnoException) => {
      finish();
      reject(failure ?? new MediaError(op, 'missing_binary', `cannot start ${binary} (${e.code ?? e.message})`));
    });
    child.on('close', (code, signal) => {
      finish();
      stderr = stderr.slice(-STDERR_KEEP);
      if (failure) return reject(failure);
      if (code !== 0) {
        const how = code === null ? `was killed by ${signal}` : `exited with code ${code}`;
        const said = lastLine(stderr);
        return reject(new MediaError(op, 'failed', `${tool} ${how}${said ? `: ${said}` : ''}`, stderr));
      }
      resolve({ stdout: Buffer.concat(chunks), stderr, ms: performance.now() - started });
    });
  });
}

/** Common ffmpeg flags: quiet, never read stdin (it would hang under a supervisor), overwrite the output. */
export const FFMPEG_QUIET = ['-hide_banner', '-nostdin', '-loglevel', 'error', '-y'] as const;

/** Runs ffmpeg with the quiet flags prepended. */
export function runFfmpeg(args: readonly string[], op: string, options?: RunOptions): Promise<RunResult> {
  return runTool('ffmpeg', [...FFMPEG_QUIET, ...args], op, options);
}

/**
 * A file operand for ffmpeg/ffprobe: an absolute path under the `file:` protocol, so a name can never be
 * read as an option (leading `-`) or as another protocol (`http:`, `concat:`, `pipe:`).
 */
export function fileArg(file: string): string {
  if (!file || file.includes('\0')) throw new TypeError(`invalid media path ${JSON.stringify(file)}`);
  return `file:${path.resolve(file)}`;
}
