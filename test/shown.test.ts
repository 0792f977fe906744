import { describe, expect, it } from 'vitest';
import { shown } from '../src/errors.js';

describe('shown (the "got ..." part of a 400)', () => {
  it('previews a value nested 100,000 deep without overflowing the stack (issue 17: it answered 500)', () => {
    let deep: unknown = [];
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(shown(deep)).toBe('[[[[[...]]]]]');
  });

  it('keeps JSON text for plain values and cuts long ones at 80 characters', () => {
    expect(shown('a"b')).toBe('"a\\\\"b"'.replace('\\\\', '\\'));
    expect(shown({ a: [1, 'x'], b: null })).toBe('{"a":[1,"x"],"b":null}');
    expect(shown(undefined)).toBe('nothing');
    expect(shown('x'.repeat(200))).toHaveLength(80);
    expect(shown(Array.from({ length: 20 }, (_, i) => i))).toBe('[0,1,2,3,4,5,6,7,8,9,10,11,...]');
  });
});
