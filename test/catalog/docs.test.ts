import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildCatalog, usdText } from '../../src/catalog/index.js';
import { renderModelsDoc } from '../../src/catalog/doc.js';

const ROOT = path.resolve(import.meta.dirname, '../..');

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = path.join(dir, name);
    return statSync(p).isDirectory() ? filesUnder(p) : [p];
  });
}

describe('docs/models.md', () => {
  it('is what `npm run docs:models` generates from the catalog (run it after changing a model)', () => {
    const onDisk = readFileSync(path.join(ROOT, 'docs/models.md'), 'utf8');
    expect(onDisk, 'docs/models.md is stale: run npm run docs:models').toBe(renderModelsDoc(buildCatalog()));
  });
});

describe('the catalog is the one place for model ids and prices', () => {
  const catalog = buildCatalog();
  const ids = catalog.models.flatMap((m) => [m.id, ...m.aliases]);
  const prices = new Set(catalog.models.flatMap((m) => [...Object.values(m.price.rates), ...Object.values(m.price.withVideo ?? {})]).map(usdText));
  const outside = filesUnder(path.join(ROOT, 'src')).filter((f) => !f.startsWith(path.join(ROOT, 'src/catalog') + path.sep));

  it.each(outside.map((f) => path.relative(ROOT, f)))('%s names no model id and no list price', (file) => {
    const text = readFileSync(path.join(ROOT, file), 'utf8');
    for (const id of ids) expect(text.includes(`'${id}'`) || text.includes(`"${id}"`) || text.includes(`\`${id}\``), `${file} names ${id}`).toBe(false);
    for (const price of prices) expect(new RegExp(`(?<![\\d.])${price.replace('.', '\\.')}(?![\\d])`).test(text), `${file} has the price ${price}`).toBe(false);
  });
});
