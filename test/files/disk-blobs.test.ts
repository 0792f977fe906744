import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { text } from 'node:stream/consumers';
import { describe, expect, it } from 'vitest';
import { DiskBlobStore } from '../../src/files/index.js';

describe('the disk blob store', () => {
  const root = mkdtempSync(path.join(tmpdir(), 'gengate-blobs-'));
  const store = new DiskBlobStore(path.join(root, 'files'));

  it('stores a file without copying its bytes, and the two names live and die apart', async () => {
    const src = path.join(root, 'render.png');
    writeFileSync(src, 'rendered bytes');
    await store.putFile('ab/abcdef', src);
    expect(await text(store.read('ab/abcdef'))).toBe('rendered bytes');
    expect(statSync(src).nlink).toBe(2); // a hard link on the same file system
    await store.delete('ab/abcdef');
    expect(readFileSync(src, 'utf8')).toBe('rendered bytes');
    await store.putFile('ab/again', src);
    rmSync(src);
    expect(await text(store.read('ab/again'))).toBe('rendered bytes');
  });

  it('takes a file over with move, and refuses keys that leave its folder', async () => {
    const src = path.join(root, 'upload.bin');
    writeFileSync(src, 'uploaded');
    await store.putFile('cd/upload', src, { move: true });
    expect(existsSync(src)).toBe(false);
    expect(await store.size('cd/upload')).toBe(8);
    await expect(store.putFile('../escape', path.join(root, 'x'))).rejects.toThrow(/bad blob key/);
  });
});
