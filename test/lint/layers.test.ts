import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/** Decision 0018: http/ → api/ → domain → store/, with mcp/ and openapi/ as faces beside http/; nothing imports upwards. */

const SRC = path.resolve(import.meta.dirname, '../../src');
/** The entry points and the composition root may import every layer. */
const ROOTS = new Set(['main.ts', 'services.ts', 'cli']);
const FACES = new Set(['http', 'mcp', 'openapi']);

/** The top folder (or root file) of a path under src/. */
const areaOf = (file: string) => path.relative(SRC, file).split(path.sep)[0]!;

/** Every relative import of every source file, as [importing area, imported area, where]. */
function imports(): Array<[string, string, string]> {
  const out: Array<[string, string, string]> = [];
  const files = readdirSync(SRC, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts'))
    .map((f) => path.join(SRC, f));
  for (const file of files) {
    for (const m of readFileSync(file, 'utf8').matchAll(/^(?:import|export)[^'"]*?from '(\.[^']+)'/gm)) {
      const target = path.resolve(path.dirname(file), m[1]!);
      if (!target.startsWith(SRC)) continue;
      out.push([areaOf(file), areaOf(target), `${path.relative(SRC, file)} imports ${m[1]}`]);
    }
  }
  return out;
}

/** Why `from` may not import `to`, or null when it may. */
function forbidden(from: string, to: string): string | null {
  if (from === to || ROOTS.has(from)) return null;
  if (FACES.has(to) && from !== 'http')
    return FACES.has(from) ? 'mcp/ and openapi/ share api/, never http/ or each other' : `only http/ (which mounts it) and the entry points import ${to}/`;
  if (to === 'api' && !FACES.has(from)) return 'the domain never imports the protocol layer';
  return null;
}

describe('layers', () => {
  it('the domain never imports api/ or a face, api/ imports no face, and mcp/ and openapi/ import neither http/ nor each other', () => {
    const all = imports();
    expect(all.filter(([from, to]) => from === 'tasks' && to === 'catalog').length).toBeGreaterThan(0); // the scan sees imports
    const wrong = all.flatMap(([from, to, where]) => {
      const why = forbidden(from, to);
      return why ? [`${where}: ${why}`] : [];
    });
    expect(wrong).toEqual([]);
  });
});
