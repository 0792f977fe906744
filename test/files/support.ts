import { openAsBlob } from 'node:fs';
import { writeFile, readFile } from 'node:fs/promises';
import type { TestServer } from '../helpers/server.js';

/** POSTs a file on disk to /files/upload as multipart field `field` (streamed from disk), JSON-decoded. */
export async function upload(s: TestServer, key: string | undefined, file: string, name: string, field = 'file'): Promise<{ status: number; body: any }> {
  const form = new FormData();
  form.append(field, await openAsBlob(file), name);
  const res = await fetch(`${s.url}/api/v1/files/upload`, { method: 'POST', body: form, headers: key ? { authorization: `Bearer ${key}` } : {} });
  return { status: res.status, body: await res.json() };
}

/** CRC-32 as PNG chunks use it. */
function crc32(bytes: Buffer): number {
  let c = ~0;
  for (const b of bytes) {
    c ^= b;
    for (let k = 0; k < 8; k++) c = (c >>> 1) ^ (0xedb88320 & -(c & 1));
  }
  return ~c >>> 0;
}

/** Rewrites a PNG's IHDR to claim `width`×`height` (with a valid CRC): a decompression bomb's header. */
export async function claimPngSize(src: string, dst: string, width: number, height: number): Promise<string> {
  const png = Buffer.from(await readFile(src));
  png.writeUInt32BE(width, 16);
  png.writeUInt32BE(height, 20);
  png.writeUInt32BE(crc32(png.subarray(12, 29)), 29);
  await writeFile(dst, png);
  return dst;
}

/** A WAV with the header quirks of streaming writers: RIFF size 0xFFFFFFFF and an extra LIST chunk before the data. */
export async function oddWav(src: string, dst: string): Promise<string> {
  const wav = Buffer.from(await readFile(src));
  const fmtEnd = 12 + 8 + wav.readUInt32LE(16);
  const list = Buffer.concat([Buffer.from('LIST'), Buffer.alloc(4), Buffer.from('INFOISFT'), Buffer.alloc(4), Buffer.from('gengate\0')]);
  list.writeUInt32LE(list.length - 8, 4);
  list.writeUInt32LE(8, 16);
  const out = Buffer.concat([wav.subarray(0, fmtEnd), list, wav.subarray(fmtEnd)]);
  out.writeUInt32LE(0xffffffff, 4);
  await writeFile(dst, out);
  return dst;
}
