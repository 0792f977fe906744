import { createWriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { GenGate } from '../client.js';
import type { FileLink, Task } from '../types.js';

/** Where the commands write: results on stdout, progress and errors on stderr. */
export interface Io {
  out: (text: string) => void;
  err: (text: string) => void;
  /** stderr is a terminal: the progress line is rewritten in place. */
  tty: boolean;
}

export const processIo: Io = {
  out: (t) => process.stdout.write(t),
  err: (t) => process.stderr.write(t),
  tty: process.stderr.isTTY === true,
};

/** The progress line: state, seconds since the command started, price. */
export function progressLine(task: Pick<Task, 'state' | 'progress' | 'costUsd'>, startedMs: number): string {
  const seconds = ((Date.now() - startedMs) / 1000).toFixed(1);
  const progress = task.state === 'generating' && task.progress > 0 ? ` ${task.progress}%` : '';
  return `${task.state}${progress} · ${seconds} s · $${task.costUsd}`;
}

/** Prints progress lines: rewritten in place on a terminal, else one line per change. */
export function progressPrinter(io: Io, startedMs: number): { show: (task: Task) => void; done: () => void } {
  let last = '';
  let shown = false;
  return {
    show: (task) => {
      const line = progressLine(task, startedMs);
      const key = `${task.state}${task.progress}`;
      if (io.tty) {
        io.err(`\r\x1b[2K${line}`);
        shown = true;
      } else if (key !== last) {
        io.err(`${line}\n`);
      }
      last = key;
    },
    done: () => {
      if (shown) io.err('\n');
    },
  };
}

/** Downloads files into `dir` as `<taskId>-<name>`; returns the paths written. */
export async function download(gg: GenGate, files: FileLink[], dir: string, taskId: string): Promise<string[]> {
  await mkdir(dir, { recursive: true });
  const written: string[] = [];
  for (const f of files) {
    const res = await gg.files.download(f.url);
    const file = path.join(dir, `${taskId}-${path.basename(f.name)}`);
    await pipeline(Readable.fromWeb(res.body! as import('node:stream/web').ReadableStream), createWriteStream(file));
    written.push(file);
  }
  return written;
}

/** A short table of tasks for people. */
export function taskRows(tasks: Task[]): string {
  return tasks.map((t) => `${t.taskId}  ${t.state.padEnd(10)} ${t.model.padEnd(28)} $${t.costUsd}  ${new Date(t.createTime).toISOString()}`).join('\n');
}
