import { parseUsd } from '../billing/index.js';
import { ConfigError, readJsonFile, type Config } from '../config.js';
import { makeCatalog } from './catalog.js';
import { parseInputMap, withAlias } from './mapping.js';
import { DEFAULT_MODELS } from './defaults.js';
import { problemText, readDefinitions } from './definitions.js';
import { checkRouteNames, configuredRoutes, parseRoutes } from './routes.js';
import { checkLimitFields } from './route-limits.js';
import type { Catalog, ModelDef, PriceRule } from './types.js';

/**
 * The operator's catalog file (GENGATE_CATALOG): per model, `enabled`, extra `aliases` (names, or
 * `{"name", "input"}` with an input mapping, src/catalog/mapping.ts), `price`
 * (a USD amount for flat prices, or an object of tiers such as {"720p": "0.30"}),
 * `price_with_client_video` (tiers) and `routes` (src/catalog/routes.ts). Inputs are changed with definition files
 * (GENGATE_MODELS, docs/models.md); this file edits prices, switches, aliases and routes of any model, shipped or not.
 * Anything unknown or wrong stops the start with a message naming the file, the model and the field.
 */

export { BACKEND_KINDS } from './routes.js';

const MODEL_KEYS = ['enabled', 'aliases', 'price', 'price_with_client_video', 'routes'];
const ALIAS = /^[A-Za-z0-9][A-Za-z0-9._:/-]{0,99}$/;

type Json = Record<string, unknown>;

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Builds the catalog from `base` (the shipped models) and an already parsed override object; throws ConfigError naming the field. */
export function buildCatalog(overrides: unknown = {}, source = 'catalog overrides', base: readonly ModelDef[] = DEFAULT_MODELS): Catalog {
  const fail = (where: string, why: string) => new ConfigError(`${source}: ${where}: ${why}`);
  if (!isObject(overrides)) throw fail('(top level)', 'must be a JSON object like {"models": {...}}');
  for (const key of Object.keys(overrides)) {
    if (key !== 'models') throw fail(key, 'unknown key; the file has one key, "models"');
  }
  const edits = overrides.models ?? {};
  if (!isObject(edits)) throw fail('models', 'must be an object keyed by model id');
  const defaults = makeCatalog(base, source);
  const changed = new Map<string, ModelDef>();
  for (const [name, edit] of Object.entries(edits)) {
    const at = `models.${JSON.stringify(name)}`;
    const model = defaults.find(name);
    if (!model) throw fail(at, `unknown model; known: ${base.map((m) => m.id).join(', ')}`);
    if (changed.has(model.id)) throw fail(at, `${model.id} is edited twice (by id and by alias)`);
    if (!isObject(edit)) throw fail(at, 'must be an object');
    changed.set(model.id, applyEdit(model, edit, at, fail));
  }
  const models = base.map((m) => changed.get(m.id) ?? m);
  checkRouteNames(models, fail);
  return makeCatalog(models, source);
}

function applyEdit(model: ModelDef, edit: Json, at: string, fail: (where: string, why: string) => ConfigError): ModelDef {
  for (const key of Object.keys(edit)) {
    if (!MODEL_KEYS.includes(key)) throw fail(`${at}.${key}`, `unknown field; fields: ${MODEL_KEYS.join(', ')}`);
  }
  let { enabled, price, routes } = model;
  let named = model;
  if (edit.enabled !== undefined) {
    if (typeof edit.enabled !== 'boolean') throw fail(`${at}.enabled`, `must be true or false (got ${JSON.stringify(edit.enabled)})`);
    enabled = edit.enabled;
  }
  if (edit.aliases !== undefined) {
    if (!Array.isArray(edit.aliases)) throw fail(`${at}.aliases`, 'must be a list of names (or {"name", "input"} objects)');
    edit.aliases.forEach((a: unknown, i) => {
      const where = `${at}.aliases[${i}]`;
      const withMap = isObject(a);
      if (withMap) {
        for (const key of Object.keys(a)) if (key !== 'name' && key !== 'input') throw fail(`${where}.${key}`, 'unknown field; an alias is {"name", "input"}');
      }
      const name = withMap ? a.name : a;
      if (typeof name !== 'string' || !ALIAS.test(name)) {
        throw fail(withMap ? `${where}.name` : where, `must be a name of letters, digits and . _ : / - (got ${JSON.stringify(name)})`);
      }
      // An alias given again with an input mapping takes that mapping; given as a plain name it keeps the one it had.
      const map = withMap && a.input !== undefined ? parseInputMap(model, a.input, `${where}.input`, fail) : named.inputMaps.get(name);
      named = withAlias(named, name, map);
    });
  }
  if (edit.price !== undefined) price = { ...price, rates: tiers(price.rates, edit.price, `${at}.price`, price, fail) };
  if (edit.price_with_client_video !== undefined) {
    if (!price.withVideo) throw fail(`${at}.price_with_client_video`, `${model.id} takes no client video`);
    price = { ...price, withVideo: tiers(price.withVideo, edit.price_with_client_video, `${at}.price_with_client_video`, price, fail) };
  }
  if (edit.routes !== undefined) routes = parseRoutes(edit.routes, `${at}.routes`, fail);
  const out = { ...named, enabled, price, routes };
  checkLimitFields(out, `${at}.`, fail);
  return out;
}

/** Merges overridden amounts into a rate table; the tiers must be the model's own. */
function tiers(
  current: Readonly<Record<string, number>>,
  given: unknown,
  at: string,
  rule: PriceRule,
  fail: (where: string, why: string) => ConfigError,
): Record<string, number> {
  const amount = (v: unknown, where: string) => {
    const micros = parseUsd(v);
    if (micros === null) throw fail(where, `must be a USD amount such as "0.125" (got ${JSON.stringify(v)})`);
    return micros;
  };
  const names = Object.keys(current);
  if (!rule.by) {
    if (isObject(given)) throw fail(at, 'this model has one flat price; give a USD amount such as "0.025"');
    return { '*': amount(given, at) };
  }
  if (!isObject(given)) throw fail(at, `must be an object of ${rule.by} tiers (${names.join(', ')}) to USD amounts`);
  const out = { ...current };
  for (const [tier, v] of Object.entries(given)) {
    if (!names.includes(tier)) throw fail(`${at}.${tier}`, `unknown ${rule.by} tier; tiers: ${names.join(', ')}`);
    out[tier] = amount(v, `${at}.${tier}`);
  }
  return out;
}

/**
 * The shipped models with the operator's definition files (GENGATE_MODELS, a file or a folder): a
 * definition with a shipped id replaces that model in place, others come after in file name order.
 * Any problem stops the start with every file:line and reason (the catalog in use stays as it was).
 */
export function withDefinitions(target: string | undefined, base: readonly ModelDef[] = DEFAULT_MODELS): readonly ModelDef[] {
  if (!target) return base;
  let read: ReturnType<typeof readDefinitions>;
  try {
    read = readDefinitions(target);
  } catch (e) {
    throw new ConfigError(`GENGATE_MODELS: cannot read ${target}: ${(e as Error).message}`);
  }
  if (read.problems.length > 0) throw new ConfigError(`GENGATE_MODELS ${target}:\n${read.problems.map(problemText).join('\n')}`);
  const mine = new Map(read.models.map((m) => [m.id, m]));
  const replaced = base.map((m) => mine.get(m.id) ?? m);
  return [...replaced, ...read.models.filter((m) => !base.some((b) => b.id === m.id))];
}

/**
 * Loads the catalog at start: defaults, GENGATE_MODELS definitions, then the GENGATE_CATALOG overrides;
 * `optional` routes whose credential is not among `secrets` are left out (decision 3311). Throws ConfigError naming the file.
 */
export function loadCatalog(config: Pick<Config, 'GENGATE_CATALOG' | 'GENGATE_MODELS'> & { secrets?: Config['secrets'] }): Catalog {
  const base = withDefinitions(config.GENGATE_MODELS);
  const file = config.GENGATE_CATALOG;
  const source = file ? `GENGATE_CATALOG ${file}` : config.GENGATE_MODELS ? `GENGATE_MODELS ${config.GENGATE_MODELS}` : 'catalog';
  const built = buildCatalog(file ? readJsonFile(file, 'GENGATE_CATALOG') : {}, source, base);
  return makeCatalog(configuredRoutes(built.models, config.secrets ?? {}), source);
}
