/** Writes docs/models.md from the default catalog: `npm run docs:models`. */
import { writeFileSync } from 'node:fs';
import { buildCatalog } from '../src/catalog/index.js';
import { renderModelsDoc } from '../src/catalog/doc.js';

writeFileSync(new URL('../docs/models.md', import.meta.url), renderModelsDoc(buildCatalog()));
process.stdout.write('wrote docs/models.md\n');
