import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { linkName, type Files } from '../../files/index.js';
import { BackendFailure } from '../types.js';

/** Sends one of our stored files (a local copy at `local`) to the upstream; answers the upstream's link to it. */
export type SendFile = (local: string, name: string, mime: string) => Promise<string>;

/** Where the local copies go and how refusals name the upstream. */
export interface OwnLinkOptions {
  readonly tmpDir: string;
  /** Prefix of the scratch folder of one file. */
  readonly scratchPrefix: string;
  /** How "the file ... before it could be sent <where>" ends. */
  readonly where: string;
}

/**
 * Replaces every link to one of OUR stored files (uploads, trimmed clips) anywhere in the input
 * with the upstream's link to the same file, made by `send` from a local copy: upstreams may not
 * reach our address, and some take only files they stored themselves. Other values go through
 * unchanged. `known` remembers what was sent for this task, so a repeated submit sends the same
 * body and uploads nothing again.
 */
export async function swapOwnLinks(
  input: Record<string, unknown>,
  files: Files,
  known: Map<string, string>,
  send: SendFile,
  opts: OwnLinkOptions,
): Promise<Record<string, unknown>> {
  const swap = async (v: unknown): Promise<unknown> => {
    if (typeof v === 'string') return files.linkId(v) ? await sendOne(v, files, known, send, opts) : v;
    if (Array.isArray(v)) {
      const out: unknown[] = [];
      for (const x of v) out.push(await swap(x));
      return out;
    }
    return v;
  };
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(input)) out[k] = await swap(v);
  return out;
}

async function sendOne(link: string, files: Files, known: Map<string, string>, send: SendFile, opts: OwnLinkOptions): Promise<string> {
  const done = known.get(link);
  if (done) return done;
  const id = files.linkId(link)!;
  const name = linkName(link) ?? '';
  const file = name ? await files.open(id, name) : null;
  if (!file) throw new BackendFailure('rejected', `the file ${name} of the input has expired or was deleted before it could be sent ${opts.where}`);
  const scratch = await mkdtemp(path.join(opts.tmpDir, opts.scratchPrefix));
  try {
    const local = path.join(scratch, name);
    await pipeline(files.blobs.read(file.blobKey), createWriteStream(local));
    const url = await send(local, name, file.mime);
    known.set(link, url);
    return url;
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}
