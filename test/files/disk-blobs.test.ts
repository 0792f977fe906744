import { existsSync, linkSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
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

  it('a source with as many links as the file system allows is copied once; later results link to that copy', async () => {
    // ext4 allows 65,000 links to a file: past that, the bench's 133,000 results of one cached render were 68,000 copies (75 GB).
    const src = path.join(root, 'popular.png');
    writeFileSync(src, 'a render many tasks share');
    const extra = path.join(root, 'extra-links');
    mkdirSync(extra);
    let full = false;
    for (let i = 0; i < 70_000 && !full; i++) {
      try {
        linkSync(src, path.join(extra, String(i)));
      } catch (e) {
        expect((e as NodeJS.ErrnoException).code).toBe('EMLINK');
        full = true;
      }
    }
    const inode = (key: string) => statSync(path.join(root, 'files', key)).ino;
    for (const k of ['ef/one', 'ef/two', 'ef/three']) await store.putFile(k, src);
    for (const k of ['ef/one', 'ef/two', 'ef/three']) expect(await text(store.read(k))).toBe('a render many tasks share');
    if (full) {
      // One copy (a new inode), which the next two share.
      expect(inode('ef/one')).not.toBe(statSync(src).ino);
      expect(inode('ef/two')).toBe(inode('ef/one'));
      expect(inode('ef/three')).toBe(inode('ef/one'));
      // The copy's blob deleted: the next put copies again rather than fail.
      await store.delete('ef/one');
      await store.delete('ef/two');
      await store.delete('ef/three');
      await store.putFile('ef/four', src);
      expect(await text(store.read('ef/four'))).toBe('a render many tasks share');
    } else {
      // A file system without that limit (70,000 links taken): every result is a link.
      for (const k of ['ef/one', 'ef/two', 'ef/three']) expect(inode(k)).toBe(statSync(src).ino);
    }
    rmSync(extra, { recursive: true });
  }, 30_000);
});
