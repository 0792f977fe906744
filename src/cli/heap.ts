import { setFlagsFromString } from 'node:v8';

/**
 * How far V8 lets the old generation grow past what the last full collection kept: 100 % (a
 * factor of 2), in place of V8's own factor.
 *
 * Why (decision 0317): V8 in Node 20 (11.3) counts the external memory allocated since the last
 * full collection as old generation when it decides whether to start one. Node's HTTP parser
 * copies every body chunk into a new 64 KB buffer, so a 200 MB upload allocates 200 MB of
 * external memory that only a collection frees. A server that has been busy and then quiet gets
 * V8's smallest factor (1.1), a limit about 24 MB above its live heap, and from then on a full
 * mark-compact every 20-30 MB of upload: 6-7 per upload, and half the upload speed. With a
 * factor of 2 the limit stays a live heap's worth above it, and the same uploads run none.
 *
 * The flag is read at each full collection, so setting it when the process starts takes effect
 * from the next one. A `--heap-growing-percent` given to node on its command line wins.
 * `npm run bench` counts the full collections per upload on a busy server and fails above its line.
 */
export const HEAP_GROWING_PERCENT = 100;

/** Sets V8's heap growing factor for this process (decision 0317); returns the flag it set, or null when node was given one. */
export function tuneHeap(execArgv: readonly string[] = process.execArgv): string | null {
  if (execArgv.some((a) => /^--heap[-_]growing[-_]percent\b/.test(a))) return null;
  const flag = `--heap-growing-percent=${HEAP_GROWING_PERCENT}`;
  setFlagsFromString(flag);
  return flag;
}
