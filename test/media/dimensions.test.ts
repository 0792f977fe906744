import { readFile } from 'node:fs/promises';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ASPECT_RATIOS, SIZE_CLASSES, VIDEO_RESOLUTIONS, imageSize, videoSize } from '../../src/backends/local/dimensions.js';

const size = ({ width, height }: { width: number; height: number }) => `${width}x${height}`;

describe('video sizes', () => {
  it.each([
    ['720p', '16:9', '1280x720'],
    ['720p', '9:16', '720x1280'],
    ['720p', '1:1', '720x720'],
    ['480p', '16:9', '854x480'],
    ['1080p', '16:9', '1920x1080'],
    ['1080p', '21:9', '2520x1080'],
    ['480p', '4:3', '640x480'],
    ['720p', 'adaptive', '1280x720'],
    ['720p', undefined, '1280x720'],
  ])('%s %s = %s', (resolution, aspect, expected) => {
    expect(size(videoSize(resolution, aspect))).toBe(expected);
  });

  it('always gives even sides in the orientation of the ratio, within 0.5 % of it', () => {
    fc.assert(
      fc.property(fc.constantFrom(...VIDEO_RESOLUTIONS), fc.constantFrom(...ASPECT_RATIOS), (resolution, aspect) => {
        const { width, height } = videoSize(resolution, aspect);
        const [w, h] = aspect.split(':').map(Number) as [number, number];
        expect((width % 2) + (height % 2)).toBe(0);
        expect(Math.min(width, height)).toBe(Number.parseInt(resolution, 10));
        expect(Math.sign(width - height)).toBe(Math.sign(w - h));
        expect(Math.abs(width / height / (w / h) - 1)).toBeLessThan(0.005);
      }),
    );
  });

  it('names the allowed values when refusing', () => {
    expect(() => videoSize('4K', '16:9')).toThrow(/480p, 720p, 1080p.*"4K"/);
    expect(() => videoSize('720p', '7:3')).toThrow(/1:1, 16:9.*"7:3"/);
  });
});

describe('image sizes', () => {
  it.each([
    ['1K', '1:1', '1024x1024'],
    ['2K', '16:9', '2048x1152'],
    ['4K', '9:16', '2304x4096'],
    ['1K', '21:9', '1024x440'],
    ['1K', 'adaptive', '1024x1024'],
    [undefined, undefined, '1024x1024'],
    ['auto', '4:3', '1024x768'],
    ['1536x1024', '1:1', '1536x1024'],
    ['2048*2048', undefined, '2048x2048'],
  ])('%s %s = %s', (sizeClass, aspect, expected) => {
    expect(size(imageSize(sizeClass, aspect))).toBe(expected);
  });

  it('puts 1024·n on the long side, the short side a multiple of 8 near the ratio', () => {
    fc.assert(
      fc.property(fc.constantFrom(...SIZE_CLASSES), fc.constantFrom(...ASPECT_RATIOS), (sizeClass, aspect) => {
        const { width, height } = imageSize(sizeClass, aspect);
        const [w, h] = aspect.split(':').map(Number) as [number, number];
        expect(Math.max(width, height)).toBe(Number.parseInt(sizeClass, 10) * 1024);
        expect(Math.min(width, height) % 8).toBe(0);
        expect(Math.abs(width / height / (w / h) - 1)).toBeLessThan(0.01);
      }),
    );
  });

  it.each(['8K0', '0x0', '99999x10', '-1K', 'huge', '16K'])('refuses size %s', (sizeClass) => {
    expect(() => imageSize(sizeClass, '1:1')).toThrow(RangeError);
  });
});

describe('docs/local-backend.md', () => {
  it('shows the same dimension table as the code', async () => {
    const doc = await readFile(new URL('../../docs/local-backend.md', import.meta.url), 'utf8');
    const table = /<!-- dimension-table:start -->\n([\s\S]*?)<!-- dimension-table:end -->/.exec(doc)?.[1] ?? '';
    const rows = table.trim().split('\n').slice(2);
    expect(rows.map((row) => row.split('|')[1]!.trim())).toEqual([...ASPECT_RATIOS]);
    for (const row of rows) {
      const [aspect, ...cells] = row
        .split('|')
        .slice(1, -1)
        .map((c) => c.trim());
      const expected = [...SIZE_CLASSES.map((c) => size(imageSize(c, aspect))), ...VIDEO_RESOLUTIONS.map((r) => size(videoSize(r, aspect)))];
      expect(cells, `row ${aspect}`).toEqual(expected);
    }
  });
});
