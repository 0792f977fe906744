import { ConfigError } from '../config.js';
import type { Catalog, ModelDef } from './types.js';

/** Makes a catalog from model definitions; throws ConfigError when two models share a name. */
export function makeCatalog(models: readonly ModelDef[], source = 'catalog', retired: readonly ModelDef[] = []): Catalog {
  const byName = new Map<string, ModelDef>();
  for (const model of models) {
    for (const name of [model.id, ...model.aliases]) {
      const other = byName.get(name);
      if (other) throw new ConfigError(`${source}: the name ${JSON.stringify(name)} is used by both ${other.id} and ${model.id}`);
      byName.set(name, model);
    }
  }
  // A retired model keeps its names for its old tasks, unless a model in force took one since.
  for (const model of retired) for (const name of [model.id, ...model.aliases]) if (!byName.has(name)) byName.set(name, model);
  return {
    models,
    find: (name) => byName.get(name),
  };
}

/** Every name a client may send as `model`: ids and aliases, for refusals that list the allowed values. */
export function modelNames(catalog: Catalog): string[] {
  return catalog.models.flatMap((m) => [m.id, ...m.aliases]);
}

/** Whether `name` (a task's `param.model`) is a name with an input mapping: a kie.ai id or an operator's mapped alias (decision 0400). */
export function hasInputMapping(catalog: Catalog, name: string): boolean {
  return catalog.find(name)?.inputMaps.has(name) ?? false;
}
