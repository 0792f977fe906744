import { request, type Transport } from './http.js';
import type { UploadedFile } from './types.js';

/** What `files.upload` takes: a file path (Node), a Blob or File, bytes (Buffer, Uint8Array), or a stream (web ReadableStream, Node Readable). */
export type UploadSource = string | Blob | Uint8Array | ArrayBuffer | ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>;

export interface UploadOptions {
  /** The file name sent (the server keeps its letters and uses the detected type's extension); default the path's or File's name, else "upload". */
  name?: string;
  signal?: AbortSignal;
}

const lastPart = (p: string) => p.split(/[\\/]/).pop() || 'upload';

/** A path read as a Blob from disk (Node only; loaded on demand so browsers never see node:fs). */
async function fromPath(p: string): Promise<Blob> {
  // A computed name, so bundlers for the browser neither resolve nor bundle node:fs.
  const name = 'node:fs';
  const fs = (await import(/* webpackIgnore: true */ /* @vite-ignore */ name)) as typeof import('node:fs');
  return fs.openAsBlob(p);
}

function isStream(x: unknown): x is ReadableStream<Uint8Array> | AsyncIterable<Uint8Array> {
  return typeof ReadableStream !== 'undefined' && x instanceof ReadableStream ? true : typeof x === 'object' && x !== null && Symbol.asyncIterator in x;
}

/** A multipart body with one field `file` around the stream's bytes, streamed as they come (nothing buffered). */
function multipartStream(source: ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>, name: string): { body: ReadableStream<Uint8Array>; type: string } {
  const boundary = `gengate-${Math.random().toString(36).slice(2)}${Date.now().toString(36)}`;
  const enc = new TextEncoder();
  const safeName = name.replace(/["\r\n]/g, '_');
  const head = enc.encode(
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${safeName}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
  );
  const tail = enc.encode(`\r\n--${boundary}--\r\n`);
  const iterable: AsyncIterable<Uint8Array> =
    source instanceof ReadableStream
      ? {
          async *[Symbol.asyncIterator]() {
            const reader = source.getReader();
            for (;;) {
              const { done, value } = await reader.read();
              if (done) return;
              yield value;
            }
          },
        }
      : source;
  async function* parts() {
    yield head;
    for await (const chunk of iterable) yield typeof chunk === 'string' ? enc.encode(chunk) : chunk;
    yield tail;
  }
  const it = parts();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { done, value } = await it.next();
      if (done) controller.close();
      else controller.enqueue(value);
    },
    async cancel() {
      await it.return(undefined);
    },
  });
  return { body, type: `multipart/form-data; boundary=${boundary}` };
}

/** POST /api/v1/files/upload. A Blob, bytes or a path may be retried (429, 5xx); a stream is sent once. */
export async function upload(t: Transport, source: UploadSource, o: UploadOptions = {}): Promise<UploadedFile> {
  if (isStream(source)) {
    const { body, type } = multipartStream(source, o.name ?? 'upload');
    return (
      await request<UploadedFile>(t, '/api/v1/files/upload', {
        method: 'POST',
        body: () => body,
        headers: { 'content-type': type },
        signal: o.signal,
        retry: false,
      })
    ).data;
  }
  let blob: Blob;
  let name = o.name;
  if (typeof source === 'string') {
    blob = await fromPath(source);
    name ??= lastPart(source);
  } else if (source instanceof Blob) {
    blob = source;
    name ??= 'name' in source && typeof source.name === 'string' && source.name ? source.name : undefined;
  } else {
    blob = new Blob([source as BlobPart]);
  }
  const fileName = name ?? 'upload';
  const body = () => {
    const form = new FormData();
    form.append('file', blob, fileName);
    return form;
  };
  return (await request<UploadedFile>(t, '/api/v1/files/upload', { method: 'POST', body, signal: o.signal })).data;
}
