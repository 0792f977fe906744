import { closeSync, mkdtempSync, openSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { LineSink } from '../../src/http/log-sink.js';
import { eventually } from '../tasks/support.js';

describe('the stdout log sink', () => {
  it('writes every line, in order, without a write per line; what is left goes out on flushSync', async () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'gengate-sink-')), 'out.log');
    const fd = openSync(file, 'w');
    const sink = new LineSink(fd);
    const lines = Array.from({ length: 5_000 }, (_, i) => `{"n":${i},"pad":"${'x'.repeat(i % 50)}"}\n`);
    for (const l of lines.slice(0, 4_000)) sink.write(l);
    expect(readFileSync(file, 'utf8').length).toBeLessThan(lines.slice(0, 4_000).join('').length); // not written line by line
    const first = lines.slice(0, 4_000).join('');
    await eventually(() => readFileSync(file, 'utf8') === first, 15_000, 'the first 4000 lines to be written');
    for (const l of lines.slice(4_000)) sink.write(l);
    sink.flushSync();
    // At once: a write left to the next turn would not show here.
    expect(readFileSync(file, 'utf8')).toBe(lines.join(''));
    closeSync(fd);
  });
});
