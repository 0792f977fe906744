import type { FileKind, FileLink, RunResult, Task } from './types.js';

const KINDS: Record<string, FileKind> = {
  png: 'image',
  jpg: 'image',
  jpeg: 'image',
  webp: 'image',
  gif: 'image',
  mp4: 'video',
  mov: 'video',
  webm: 'video',
  mp3: 'audio',
  wav: 'audio',
  m4a: 'audio',
};

/** A file link with its kind (by the file name's extension; `fallback` when it has none) and its name. */
export function fileLink(url: string, fallback: FileKind = 'image'): FileLink {
  const name = decodeURIComponent(new URL(url).pathname.split('/').pop() ?? '') || 'file';
  const ext = name.includes('.') ? name.split('.').pop()!.toLowerCase() : '';
  return { url, kind: KINDS[ext] ?? fallback, name };
}

/** `resultJson` as an object, whichever shape the task has (a JSON string, or an object for video). */
export function resultOf(task: Pick<Task, 'resultJson'>): Record<string, unknown> | null {
  const r = task.resultJson;
  if (r === null || r === undefined || r === '') return null;
  return typeof r === 'string' ? (JSON.parse(r) as Record<string, unknown>) : r;
}

/** The result files of a successful task (none before success). */
export function resultFiles(task: Pick<Task, 'resultJson'>): FileLink[] {
  const r = resultOf(task);
  const urls = Array.isArray(r?.resultUrls) ? (r.resultUrls as unknown[]).filter((u): u is string => typeof u === 'string') : [];
  return urls.map((u) => fileLink(u));
}

/** Exact integer micro-USD of a decimal USD text such as "1.405" (no floating point on the way). */
export function microsOf(usd: string | number): number {
  const text = typeof usd === 'number' ? usd.toFixed(6) : usd.trim();
  const m = /^(-?)(\d+)(?:\.(\d{0,6})\d*)?$/.exec(text);
  if (!m) return 0;
  const micros = Number(m[2]) * 1_000_000 + Number((m[3] ?? '').padEnd(6, '0'));
  return m[1] ? -micros : micros;
}

/** The RunResult of a successful task. */
export function runResult(task: Task): RunResult {
  const r = resultOf(task);
  return {
    taskId: task.taskId,
    model: task.model,
    files: resultFiles(task),
    lastFrame: typeof task.lastFrameUrl === 'string' ? fileLink(task.lastFrameUrl) : null,
    duration: typeof r?.duration === 'number' ? r.duration : null,
    costUsd: task.costUsd,
    costMicros: microsOf(task.costUsd),
    costRub: task.costRub,
    costTime: task.costTime,
    task,
  };
}
