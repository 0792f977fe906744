import { readFileSync, writeFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildCatalog } from '../../src/catalog/index.js';
import { renderClientTypes } from '../../scripts/client-types.js';
import { tsc } from './support.js';

const ROOT = path.resolve(import.meta.dirname, '../..');

describe('the SDK input types generated from the catalog', () => {
  it('packages/client/src/models.ts is what scripts/gen-client-types.ts writes (run `npm run client:types` after changing a model)', async () => {
    const onDisk = readFileSync(path.join(ROOT, 'packages/client/src/models.ts'), 'utf8');
    expect(onDisk, 'packages/client/src/models.ts is stale: run npm run client:types').toBe(await renderClientTypes(buildCatalog()));
  });

  it('names every model id and alias of the catalog', async () => {
    const text = readFileSync(path.join(ROOT, 'packages/client/src/models.ts'), 'utf8');
    for (const m of buildCatalog().models) for (const id of [m.id, ...m.aliases]) expect(text).toContain(`'${id}': `);
  });

  it('makes a wrong field or value a compile error (each @ts-expect-error line), and accepts right inputs', async () => {
    const file = 'test/client/typecheck/wrong-field.ts';
    const ok = await tsc(file);
    expect(ok.out).toBe('');
    expect(ok.code).toBe(0);
    // Without the directives the same lines must fail to compile, naming the field or value.
    const stripped = path.join(ROOT, 'test/client/typecheck/.stripped.ts');
    writeFileSync(stripped, readFileSync(path.join(ROOT, file), 'utf8').replace(/^\s*\/\/ @ts-expect-error.*$/gm, ''));
    try {
      const bad = await tsc(stripped);
      expect(bad.code).not.toBe(0);
      expect(bad.out).toMatch(/'promt' does not exist in type 'NanoBanana2Input'/);
      expect(bad.out).toMatch(/'"8K"' is not assignable/);
      expect(bad.out).toMatch(/'7' is not assignable/);
      expect(bad.out.match(/error TS/g)).toHaveLength(3);
    } finally {
      rmSync(stripped, { force: true });
    }
  }, 60_000);
});
