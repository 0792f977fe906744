import { randomBytes } from 'node:crypto';
import { open, readFile, readdir, writeFile, type FileHandle } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { FileSink } from '../../src/files/index.js';
import { useTmpDir } from '../media/helpers.js';

const KB = 1024;
const MB = 1024 * KB;

/** The prototype every FileHandle shares, to watch or bend its writev. */
async function handlePrototype(file: string): Promise<FileHandle> {
  const h = await open(file, 'w');
  await h.close();
  return Object.getPrototypeOf(h) as FileHandle;
}

/** `count` chunks of `size` random bytes, as a socket hands them over. */
function chunks(count: number, size: number): Buffer[] {
  return Array.from({ length: count }, () => randomBytes(size));
}

/** How many file descriptors this process holds open. */
async function openFds(): Promise<number> {
  return (await readdir('/proc/self/fd')).length;
}

describe('FileSink', () => {
  const at = useTmpDir();
  afterEach(() => vi.restoreAllMocks());

  it('writes every byte in order, in batches of the given size rather than chunk by chunk', async () => {
    const proto = await handlePrototype(at('probe'));
    const writev = vi.spyOn(proto, 'writev');
    const parts = [...chunks(64, 64 * KB), randomBytes(1000)];
    const file = at('out.bin');
    await pipeline(Readable.from(parts), new FileSink(file, MB));
    expect((await readFile(file)).equals(Buffer.concat(parts))).toBe(true);
    // 4 MB in 64 KB chunks: four full batches and the 1,000-byte rest, not 65 writes.
    expect(writev).toHaveBeenCalledTimes(5);
    expect(writev.mock.calls.map(([bufs]) => (bufs as Buffer[]).length)).toEqual([16, 16, 16, 16, 1]);
  });

  it('writes the rest again when writev writes less than it was given', async () => {
    const proto = await handlePrototype(at('probe'));
    const original = proto.writev;
    // Each call writes only the first half of its first buffer, as a full disk or a signal may make it.
    vi.spyOn(proto, 'writev').mockImplementation(function (this: FileHandle, bufs: readonly NodeJS.ArrayBufferView[]) {
      const first = bufs[0] as Buffer;
      return original.call(this, [first.subarray(0, Math.ceil(first.length / 2))]);
    });
    const parts = chunks(40, 50 * KB);
    const file = at('halves.bin');
    await pipeline(Readable.from(parts), new FileSink(file, 256 * KB));
    expect((await readFile(file)).equals(Buffer.concat(parts))).toBe(true);
  });

  it('never writes over an existing file', async () => {
    const file = at('taken.bin');
    await writeFile(file, 'kept');
    await expect(pipeline(Readable.from(chunks(2, KB)), new FileSink(file, MB))).rejects.toMatchObject({ code: 'EEXIST' });
    expect(await readFile(file, 'utf8')).toBe('kept');
  });

  it('an empty stream gives an empty file', async () => {
    const file = at('empty.bin');
    await pipeline(Readable.from([]), new FileSink(file, MB));
    expect((await readFile(file)).length).toBe(0);
  });

  it('closes its file when the source fails halfway', async () => {
    const before = await openFds();
    async function* failing() {
      yield randomBytes(2 * MB);
      yield randomBytes(100 * KB);
      throw new Error('client went away');
    }
    await expect(pipeline(Readable.from(failing()), new FileSink(at('cut.bin'), MB))).rejects.toThrow('client went away');
    expect(await openFds()).toBe(before);
  });

  it('passes a failed write on and closes its file', async () => {
    const proto = await handlePrototype(at('probe'));
    const before = await openFds();
    vi.spyOn(proto, 'writev').mockRejectedValue(Object.assign(new Error('no space left on device'), { code: 'ENOSPC' }));
    await expect(pipeline(Readable.from(chunks(20, 64 * KB)), new FileSink(at('full.bin'), MB))).rejects.toMatchObject({ code: 'ENOSPC' });
    expect(await openFds()).toBe(before);
  });
});
