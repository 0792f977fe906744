/** Writes packages/client/src/models.ts (the SDK's input type per model) from the default catalog. */
import { writeFileSync } from 'node:fs';
import { buildCatalog } from '../src/catalog/index.js';
import { renderClientTypes } from './client-types.js';

writeFileSync(new URL('../packages/client/src/models.ts', import.meta.url), await renderClientTypes(buildCatalog()));
process.stdout.write('wrote packages/client/src/models.ts\n');
