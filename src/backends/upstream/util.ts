import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { OUTPUT_OF_KIND } from '../../catalog/index.js';
import { ConfigError } from '../../config.js';
import { NetError } from '../../net/index.js';
import { BackendFailure, type BackendJob, type CancelOutcome, type FailKind, type OutputFile } from '../types.js';
import type { JsonResponse, UpstreamHttp } from './http.js';

/** A string field of an object, else undefined. */
export const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
/** A finite number field, else undefined. */
export const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
/** An object field, else an empty object. */
export const obj = (v: unknown): Record<string, unknown> => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {});
/** A list of strings (a lone string becomes a list of one). */
export const strings = (v: unknown): string[] => (typeof v === 'string' ? [v] : Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
/** The strings of a link list, or undefined when there are none (so `present` leaves the field out). */
export const someStrings = (v: unknown): string[] | undefined => {
  const list = strings(v);
  return list.length > 0 ? list : undefined;
};

/** Words upstreams use when their moderation stops a job; matched case-insensitively in error codes and messages. */
const MODERATION =
  /sensitive|nsfw|content[ _-]?polic|moderat|safety[ _-]?(check|filter|system|polic)|unsafe|flagged|risk ?detection|copyright|privacy ?information|real person/i;
const TIMEOUT = /time[ _-]?out|timed out|deadline|expired/i;

/** The FailKind an upstream's failure text suggests, falling back to `otherwise`. */
export function kindFromText(text: string, otherwise: FailKind): FailKind {
  if (MODERATION.test(text)) return 'content';
  if (TIMEOUT.test(text)) return 'timeout';
  return otherwise;
}

/**
 * Per-route input mapping overrides (docs/backends.md): `rename` moves a provider field to another
 * name, `set` adds constant fields, `omit` drops fields. Applied after the adapter's own mapping.
 */
export function applyMap(input: Record<string, unknown>, map: Readonly<Record<string, unknown>> | undefined): Record<string, unknown> {
  if (!map) return input;
  const out = { ...input };
  for (const [from, to] of Object.entries(obj(map.rename))) {
    if (typeof to !== 'string' || !(from in out)) continue;
    out[to] = out[from];
    delete out[from];
  }
  for (const field of strings(map.omit)) delete out[field];
  Object.assign(out, obj(map.set));
  return out;
}

/**
 * Checks a route's `map` when the backend is built, so a typo stops the start instead of silently
 * sending the wrong input: only `rename` (object of strings), `set` (object) and `omit` (list of strings).
 */
export function checkMap(map: Readonly<Record<string, unknown>> | undefined, route: string): void {
  if (!map) return;
  const isObject = (v: unknown) => !!v && typeof v === 'object' && !Array.isArray(v);
  for (const [key, value] of Object.entries(map)) {
    if (key === 'rename' && isObject(value) && Object.values(value as object).every((v) => typeof v === 'string')) continue;
    if (key === 'set' && isObject(value)) continue;
    if (key === 'omit' && Array.isArray(value) && value.every((v) => typeof v === 'string')) continue;
    throw new ConfigError(
      `route ${route}: map.${key} is not allowed as ${JSON.stringify(value)}; a map has "rename" (object of field names), "set" (object of constant fields) and "omit" (list of field names)`,
    );
  }
}

/** Copies the fields that are present, so absent GenGate fields leave the upstream's defaults alone. */
export function present(pairs: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(pairs).filter(([, v]) => v !== undefined));
}

/**
 * Downloads one result into tmpDir through the guard. The file's real type is sniffed later by the
 * engine; the mime here is the upstream's word. A 404/410 means the result is gone (a definite
 * failure); other trouble is transient and the engine tries again.
 */
export async function fetchResult(
  http: UpstreamHttp,
  url: string,
  tmpDir: string,
  label: string,
  fallbackMime: string,
  headers?: Readonly<Record<string, string>>,
): Promise<OutputFile> {
  const dest = path.join(tmpDir, `${label}-${randomBytes(6).toString('hex')}`);
  try {
    const got = await http.download(url, dest, headers && Object.keys(headers).length > 0 ? { headers } : {});
    const mime = got.mime && got.mime !== 'application/octet-stream' ? got.mime : fallbackMime;
    return { path: dest, mime };
  } catch (e) {
    if (e instanceof NetError && (e.status === 404 || e.status === 410)) {
      throw new BackendFailure('generation', `the upstream's result is gone (HTTP ${e.status}) before it could be copied`);
    }
    if (e instanceof NetError && (e.code === 'blocked' || e.code === 'bad_url' || e.code === 'too_large')) {
      throw new BackendFailure('generation', `the upstream's result could not be copied: ${e.message}`);
    }
    throw e;
  }
}

/** Downloads several results in order; when one fails, the ones already downloaded are removed (nobody else would). `headers` go to every download (a credential only for the upstream's own address). */
export async function fetchAll(
  http: UpstreamHttp,
  items: readonly { url: string; label: string; mime: string }[],
  tmpDir: string,
  headers?: Readonly<Record<string, string>>,
): Promise<OutputFile[]> {
  const done: OutputFile[] = [];
  try {
    for (const item of items) done.push(await fetchResult(http, item.url, tmpDir, item.label, item.mime, headers));
    return done;
  } catch (e) {
    await Promise.all(done.map((f) => rm(f.path, { force: true })));
    throw e;
  }
}

/**
 * Downloads the files a finished upstream job lists: the two tracks of a song, else the first file.
 * No file at all is a definite failure (`emptyMessage` says it in the provider's words).
 */
export async function fetchOutputs(http: UpstreamHttp, job: BackendJob, links: readonly string[], tmpDir: string, emptyMessage: string): Promise<OutputFile[]> {
  if (links.length === 0) throw new BackendFailure('generation', emptyMessage);
  const wanted = links.slice(0, OUTPUT_OF_KIND[job.kind].files);
  return fetchAll(
    http,
    wanted.map((url, i) => ({ url, label: `${job.taskId}-${i + 1}`, mime: OUTPUT_OF_KIND[job.kind].mime })),
    tmpDir,
  );
}

/** The message of a plain error from a progress/results call: includes the status and a short body excerpt. */
export function transient(what: string, status: number, text: string): Error {
  const t = text.trim();
  return new Error(`${what}: upstream answered HTTP ${status}${t ? `: ${t.slice(0, 200)}` : ''}`);
}

/**
 * A provider's answer to a cancel call as a CancelOutcome: `read` classifies the answer; a call that
 * throws (network trouble, the guard's deadline) is `unknown`: the job may or may not have stopped.
 */
export async function cancelOutcome(call: () => Promise<JsonResponse>, read: (res: JsonResponse) => CancelOutcome): Promise<CancelOutcome> {
  let res: JsonResponse;
  try {
    res = await call();
  } catch {
    return 'unknown';
  }
  return read(res);
}
