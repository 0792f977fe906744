import { readFile } from 'node:fs/promises';

/**
 * Reading an upstream's published document for `gengate models import`: over HTTP (the upstream's
 * address, or the operator's `--base-url`) or from a file (`--doc`). Every failure is an
 * ImportError whose message says what was read, from where, and why it failed; nothing is written
 * when one is thrown.
 */

/** A failure of an import, shown to the operator as it is. */
export class ImportError extends Error {
  override name = 'ImportError';
}

/** A document larger than this is refused (a schema is a few hundred kB at most). */
const MAX_BYTES = 10_000_000;
/** How long one read may take (an unreachable host fails sooner, on its own). */
const TIMEOUT_MS = 30_000;

export interface Got {
  readonly status: number;
  readonly text: string;
  /** Where it was read from, for messages and the draft's comments. */
  readonly from: string;
}

/** The network error's own words (ECONNREFUSED, ENOTFOUND, a timeout), not fetch's bare "fetch failed". */
function reason(e: unknown): string {
  const err = e as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (err.name === 'TimeoutError' || err.name === 'AbortError') return `no answer within ${TIMEOUT_MS / 1000} s`;
  return err.cause?.code ?? err.cause?.message ?? err.message ?? String(e);
}

/** GETs `url` (`what` names it in messages: "fal's OpenAPI document of fal-ai/flux/dev"); any status is returned, a network failure throws. */
export async function get(url: string, what: string, headers: Readonly<Record<string, string>> = {}): Promise<Got> {
  let res: Response;
  try {
    res = await fetch(url, {
      headers: { accept: 'application/json, text/markdown, text/plain;q=0.9, */*;q=0.5', ...headers },
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
  } catch (e) {
    throw new ImportError(`cannot reach ${what} at ${url}: ${reason(e)}`);
  }
  const size = Number(res.headers.get('content-length') ?? 0);
  if (size > MAX_BYTES) {
    await res.body?.cancel();
    throw new ImportError(`${what} at ${url} is larger than ${MAX_BYTES} bytes`);
  }
  let text: string;
  try {
    text = await res.text();
  } catch (e) {
    throw new ImportError(`cannot read ${what} at ${url}: ${reason(e)}`);
  }
  if (text.length > MAX_BYTES) throw new ImportError(`${what} at ${url} is larger than ${MAX_BYTES} bytes`);
  return { status: res.status, text, from: url };
}

/** Reads a local copy of an upstream's document (`--doc FILE`). */
export async function readLocal(file: string, what: string): Promise<Got> {
  try {
    const text = await readFile(file, 'utf8');
    if (text.length > MAX_BYTES) throw new Error(`larger than ${MAX_BYTES} bytes`);
    return { status: 200, text, from: file };
  } catch (e) {
    throw new ImportError(`cannot read ${what} from ${file}: ${(e as Error).message}`);
  }
}

/** `--doc` as given: an http(s) address is fetched, anything else is a file. */
export function readDoc(doc: string, what: string, headers: Readonly<Record<string, string>> = {}): Promise<Got> {
  return /^https?:\/\//i.test(doc) ? get(doc, what, headers) : readLocal(doc, what);
}

/** The answer's JSON object, or an ImportError naming the document and the first characters it had instead. */
export function jsonObject(got: Got, what: string): Record<string, unknown> {
  let data: unknown;
  try {
    data = JSON.parse(got.text);
  } catch {
    throw new ImportError(`${what} at ${got.from} is not JSON (it starts ${JSON.stringify(got.text.slice(0, 60))})`);
  }
  if (!isObject(data)) throw new ImportError(`${what} at ${got.from} is not a JSON object`);
  return data;
}

/** Refuses an answer other than 200 with the upstream's status and the start of its body. */
export function expectOk(got: Got, what: string, hints: Readonly<Record<number, string>> = {}): void {
  if (got.status === 200) return;
  const hint = hints[got.status] ? `: ${hints[got.status]}` : '';
  throw new ImportError(`${what}: HTTP ${got.status} from ${got.from}${hint} (${JSON.stringify(got.text.slice(0, 200))})`);
}

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
