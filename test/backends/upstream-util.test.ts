import { describe, expect, it } from 'vitest';
import { createFalBackend } from '../../src/backends/fal/index.js';
import { UpstreamHttp } from '../../src/backends/upstream/index.js';
import { applyMap, checkMap, kindFromText } from '../../src/backends/upstream/util.js';
import { NetGuard } from '../../src/net/index.js';
import { ConfigError } from '../../src/config.js';

describe('route input maps', () => {
  it('renames, then drops, then sets', () => {
    expect(applyMap({ a: 1, b: 2, c: 3 }, { rename: { a: 'x', zz: 'y' }, omit: ['b'], set: { c: 9, d: 'k' } })).toEqual({ x: 1, c: 9, d: 'k' });
    expect(applyMap({ a: 1 }, undefined)).toEqual({ a: 1 });
  });

  it('a map with an unknown key or a wrong shape stops the backend from being built, naming the route and key', () => {
    expect(() => checkMap({ rename: { a: 'b' }, set: { x: 1 }, omit: ['y'] }, 'r')).not.toThrow();
    expect(() => checkMap({ renames: {} }, 'fal#1')).toThrow(/route fal#1: map\.renames is not allowed/);
    expect(() => checkMap({ omit: 'seed' }, 'r')).toThrow(/map\.omit/);
    expect(() => checkMap({ omit: 'seed' }, 'r')).toThrow(ConfigError);
    expect(() => checkMap({ rename: { a: 1 } }, 'r')).toThrow(/map\.rename/);
    const guard = new NetGuard({ allowPrivate: true });
    const http = new UpstreamHttp(guard);
    expect(() =>
      createFalBackend({ name: 'fal#2', baseUrl: 'https://queue.fal.run', apiKey: 'k', upstreamModel: 'a/b', http, tmpDir: '/tmp', map: { sett: {} } }),
    ).toThrow(/fal#2: map\.sett/);
    guard.close();
  });
});

describe('failure words', () => {
  it.each([
    ['OutputVideoSensitiveContentDetected', 'content'],
    ['NSFW content detected', 'content'],
    ['blocked by the safety checker', 'content'],
    ['Request timed out', 'timeout'],
    ['input.safety_tolerance must be at most 6', 'rejected'],
    ['CUDA error', 'rejected'],
  ])('%s → %s', (text, kind) => expect(kindFromText(text, 'rejected')).toBe(kind));
});
