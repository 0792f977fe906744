/** Writes docs/models.md and docs/model-definition.schema.json from the default catalog and the format: `npm run docs:models`. */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { format, resolveConfig } from 'prettier';
import { buildCatalog, definitionJsonSchema } from '../src/catalog/index.js';
import { renderModelsDoc } from '../src/catalog/doc.js';

writeFileSync(new URL('../docs/models.md', import.meta.url), renderModelsDoc(buildCatalog()));
const schemaFile = fileURLToPath(new URL('../docs/model-definition.schema.json', import.meta.url));
const options = { ...(await resolveConfig(schemaFile)), filepath: schemaFile };
writeFileSync(schemaFile, await format(JSON.stringify(definitionJsonSchema()), options));
process.stdout.write('wrote docs/models.md and docs/model-definition.schema.json\n');
