import { Errors, shown } from '../errors.js';
import { boolFrom } from './coerce.js';
import type { InputMap, InputRename, ModelDef } from './types.js';

/**
 * Input mappings of aliases (DECISIONS §18, docs/decisions/0400): the names and values a client
 * of another API family sends under an alias, brought to the model's own fields before
 * validation. One format serves the default kie.ai table (src/catalog/kie.ts) and the
 * operator's catalog file, and is read by the same checks.
 */

const NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Checks a mapping given as JSON against the model's fields; `fail` builds the error naming where. */
export function parseInputMap(model: ModelDef, given: unknown, at: string, fail: (where: string, why: string) => Error): InputMap {
  if (!isObject(given)) throw fail(at, 'must be an object of sent input names to the model\'s fields, e.g. {"ratio": "aspect_ratio"}');
  const fields = [...model.fields.keys()].join(', ');
  const field = (v: unknown, where: string) => {
    if (typeof v !== 'string' || !model.fields.has(v))
      throw fail(where, `must be an input field of ${model.id} (got ${JSON.stringify(v)}); its fields: ${fields}`);
    return v;
  };
  const out: Record<string, InputRename> = {};
  for (const [name, rule] of Object.entries(given)) {
    const where = `${at}.${name}`;
    if (!NAME.test(name)) throw fail(where, 'a sent name is letters, digits and _');
    if (model.fields.has(name)) throw fail(where, `${name} is already an input field of ${model.id}; only other names can be mapped`);
    if (typeof rule === 'string') {
      out[name] = field(rule, where);
      continue;
    }
    if (!isObject(rule)) throw fail(where, 'must be a field name, or an object with "to" (and "values"), "ignore" or "instead"');
    const keys = Object.keys(rule).sort().join(',');
    if (keys === 'to' || keys === 'to,values') {
      if (Array.isArray(rule.to)) {
        if (rule.values !== undefined) throw fail(`${where}.values`, 'values map only a single field, not a list spread over fields');
        if (rule.to.length === 0) throw fail(`${where}.to`, 'must name at least one field');
        out[name] = { to: rule.to.map((f, i) => field(f, `${where}.to[${i}]`)) };
        continue;
      }
      const to = field(rule.to, `${where}.to`);
      if (rule.values === undefined) out[name] = { to };
      else {
        if (!isObject(rule.values) || !Object.values(rule.values).every((v) => typeof v === 'string')) {
          throw fail(`${where}.values`, 'must be an object of sent values to the field\'s values, e.g. {"jpg": "jpeg"}');
        }
        out[name] = { to, values: Object.fromEntries(Object.entries(rule.values).map(([k, v]) => [k.toLowerCase(), v as string])) };
      }
    } else if (keys === 'ignore') {
      const ok = rule.ignore === 'boolean' || (Array.isArray(rule.ignore) && rule.ignore.length > 0 && rule.ignore.every((v) => typeof v === 'string'));
      if (!ok) throw fail(`${where}.ignore`, 'must be "boolean" or a list of the accepted text values');
      out[name] = { ignore: rule.ignore as 'boolean' | string[] };
    } else if (keys === 'instead') {
      out[name] = { instead: field(rule.instead, `${where}.instead`) };
    } else {
      throw fail(where, `must have "to" (and "values"), "ignore" or "instead" (got the keys ${keys || 'none'})`);
    }
  }
  return out;
}

/** Where one sent value goes: the model's field, the value, and the name the client used (for messages). */
export interface Mapped {
  readonly field: string;
  readonly value: unknown;
  readonly as: string;
}

/**
 * Brings one sent name and value under `alias` to the model's fields; [] when the value is
 * accepted and ignored. Throws an AppError naming the field as the client sent it.
 */
export function mapSent(model: ModelDef, alias: string, rule: InputRename, name: string, value: unknown): Mapped[] {
  const path = `input.${name}`;
  const under = alias === model.id ? model.id : `${alias} (${model.id})`;
  if (typeof rule === 'string') return [{ field: rule, value, as: name }];
  if ('instead' in rule) {
    const def = model.fields.get(rule.instead)!;
    throw Errors.invalid(
      `${path} is not priced by GenGate for ${under} (got ${shown(value)}); ${model.id} is priced by input.${rule.instead}, which must be ${def.allowed}`,
    );
  }
  if ('ignore' in rule) {
    const values = rule.ignore;
    const ok = values === 'boolean' ? boolFrom(value) !== null : typeof value === 'string' && values.includes(value.trim().toLowerCase());
    if (!ok) {
      const allowed = values === 'boolean' ? 'true or false' : `one of ${values.map((v) => `"${v}"`).join(', ')}`;
      throw Errors.invalid(`${path} must be ${allowed} for ${under} (got ${shown(value)})`);
    }
    return [];
  }
  if (typeof rule.to === 'string') {
    const values = 'values' in rule ? rule.values : undefined;
    const key = typeof value === 'string' ? value.trim().toLowerCase() : undefined;
    const mapped = values && key !== undefined && Object.hasOwn(values, key) ? values[key] : value;
    return [{ field: rule.to, value: mapped, as: name }];
  }
  const fields = rule.to as readonly string[];
  const count = fields.length === 1 ? 'one link' : `up to ${fields.length} links (${fields.join(', ')} in that order)`;
  if (!Array.isArray(value) || value.length > fields.length) {
    const got = Array.isArray(value) ? `${value.length} links` : shown(value);
    throw Errors.invalid(`${path} must be a list of ${count} for ${under} (got ${got})`);
  }
  return value.map((v, i) => ({ field: fields[i]!, value: v, as: `${name}[${i}]` }));
}

/** The sent names a mapping accepts (those it refuses, `instead`, are left out). */
export function acceptedNames(map: InputMap): string[] {
  return Object.keys(map).filter((name) => {
    const rule = map[name]!;
    return typeof rule === 'string' || !('instead' in rule);
  });
}

/** The mapping in words, e.g. `` `image_urls` → `image_input` ``, for docs/models.md and `/models`. */
export function mappingWords(model: ModelDef, map: InputMap): string[] {
  return Object.entries(map).map(([name, rule]) => {
    if (typeof rule === 'string') return `\`${name}\` → \`${rule}\``;
    if ('instead' in rule) return `\`${name}\` refused (GenGate prices \`${rule.instead}\`: ${model.fields.get(rule.instead)!.allowed})`;
    if ('ignore' in rule)
      return `\`${name}\` accepted and ignored (${rule.ignore === 'boolean' ? 'true or false' : rule.ignore.map((v) => `"${v}"`).join(', ')})`;
    if (typeof rule.to !== 'string') return `\`${name}\` (a list) → ${rule.to.map((f) => `\`${f}\``).join(', ')}`;
    const values =
      'values' in rule && rule.values
        ? ` (${Object.entries(rule.values)
            .map(([k, v]) => `"${k}" → "${v}"`)
            .join(', ')})`
        : '';
    return `\`${name}\` → \`${rule.to}\`${values}`;
  });
}

/** JSON Schema properties of the names aliases add, each saying under which model names it applies. */
export function mappingProperties(model: ModelDef, base: Record<string, Record<string, unknown>>): Record<string, unknown> {
  const under = new Map<string, { rule: InputRename; names: string[] }>();
  for (const [alias, map] of model.inputMaps) {
    for (const [name, rule] of Object.entries(map)) {
      if (typeof rule !== 'string' && 'instead' in rule) continue;
      const seen = under.get(name);
      if (seen) seen.names.push(alias);
      else under.set(name, { rule, names: [alias] });
    }
  }
  const out: Record<string, unknown> = {};
  for (const [name, { rule, names }] of under) {
    const { description, ...schema } = describeRule(rule, base);
    out[name] = { ...schema, description: `Only under model ${names.map((n) => `"${n}"`).join(', ')}: ${description as string}` };
  }
  return out;
}

function describeRule(rule: InputRename, base: Record<string, Record<string, unknown>>): Record<string, unknown> {
  if (typeof rule === 'string') return { ...stripped(base[rule]), description: `same as ${rule}.` };
  if ('ignore' in rule) {
    const schema = rule.ignore === 'boolean' ? { type: 'boolean' } : { type: 'string', enum: [...rule.ignore] };
    return { ...schema, description: 'accepted for compatibility and ignored (it changes neither the price nor the result).' };
  }
  if ('instead' in rule) return {};
  if (typeof rule.to === 'string') return { ...stripped(base[rule.to]), description: `same as ${rule.to}.` };
  return { type: 'array', items: { type: 'string' }, maxItems: rule.to.length, description: `a list whose entries go to ${rule.to.join(', ')} in that order.` };
}

/** A field's schema without its default and description (the alias has its own words). */
function stripped(schema: Record<string, unknown> | undefined): Record<string, unknown> {
  const { default: _d, description: _s, ...rest } = schema ?? {};
  return rest;
}

/** The model with `name` as an alias (unless it is the id) whose input mapping is `map` (none: a plain alias). */
export function withAlias(model: ModelDef, name: string, map?: InputMap): ModelDef {
  const aliases = name === model.id || model.aliases.includes(name) ? model.aliases : [...model.aliases, name];
  const inputMaps = new Map(model.inputMaps);
  if (map) inputMaps.set(name, map);
  else inputMaps.delete(name);
  return { ...model, aliases, inputMaps };
}

/** Adds aliases with mappings (the kie.ai table's rows) to their models; throws naming the row when one does not fit. */
export function addAliases(models: readonly ModelDef[], rows: readonly { name: string; model: string; input: unknown }[], source: string): ModelDef[] {
  const fail = (where: string, why: string) => new Error(`${source}: ${where}: ${why}`);
  const byId = new Map(models.map((m) => [m.id, m]));
  for (const row of rows) {
    const model = byId.get(row.model);
    if (!model) throw fail(row.name, `unknown model ${row.model}`);
    byId.set(model.id, withAlias(model, row.name, parseInputMap(model, row.input, row.name, fail)));
  }
  return models.map((m) => byId.get(m.id)!);
}
