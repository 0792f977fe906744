import { parseUsd } from '../billing/index.js';
import type { Fail } from './compile-fields.js';
import type { Definition, PriceSpec } from './format.js';
import { PRICE_KEY_JOIN, type PriceRule } from './types.js';

/**
 * The `price` of a definition → the runtime PriceRule (micro-USD), and the coverage check: every
 * valid input must have a rate, so a definition whose price cannot be computed for some value of
 * its enums and ranges is refused at load, never at a client's createTask.
 */

/**
 * What `gengate models import` writes where the operator's price goes (decision 3303): a definition
 * holding it is refused, so an imported draft cannot be sold before someone sets its price.
 */
export const PRICE_PLACEHOLDER = 'SET-PRICE';

/** Price tables are enumerated at load; beyond this many combinations a table is refused. */
const MAX_COMBINATIONS = 10_000;
/** An integer range a table may go over (every value needs a rate). */
const MAX_RANGE = 1_000;

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

function micros(v: unknown, at: string, fail: Fail): number {
  if (v === PRICE_PLACEHOLDER) {
    throw fail(at, `is ${PRICE_PLACEHOLDER}: set your price, a USD amount such as "0.125" (the upstream's cost is in the comment the import wrote)`);
  }
  const m = parseUsd(v);
  if (m === null) throw fail(at, `must be a USD amount such as "0.125" (got ${JSON.stringify(v)})`);
  return m;
}

/** The values a price field takes, as rate keys; refuses fields a table cannot go over. */
function keysOf(def: Definition, field: string, at: string, fail: Fail): string[] {
  const spec = def.inputs[field];
  if (!spec) throw fail(at, `${field} is not an input field of ${def.id}`);
  if (spec.type === 'choice') return [...spec.values];
  if (spec.type === 'boolean') return ['true', 'false'];
  if (spec.type === 'integer' && !spec.auto) {
    if (spec.only) return spec.only.map(String);
    if (spec.max - spec.min < MAX_RANGE) return Array.from({ length: spec.max - spec.min + 1 }, (_, i) => String(spec.min + i));
  }
  throw fail(at, `a price table goes over choice, boolean or integer fields without "auto" and with at most ${MAX_RANGE} values (${field} is not one)`);
}

/** Flattens nested rates (one level per `by` field) into keys joined with PRICE_KEY_JOIN; unknown values are refused. */
function flatRates(given: unknown, keys: readonly string[][], by: readonly string[], at: string, fail: Fail): Record<string, number> {
  const out: Record<string, number> = {};
  const walk = (node: unknown, depth: number, prefix: string[], where: string) => {
    if (!isObject(node))
      throw fail(where, `must be an object of ${by[depth]} values to ${depth + 1 < by.length ? `tables over ${by[depth + 1]}` : 'USD amounts'}`);
    for (const [key, value] of Object.entries(node)) {
      if (!keys[depth]!.includes(key)) throw fail(`${where}.${key}`, `unknown ${by[depth]} tier; tiers: ${keys[depth]!.join(', ')}`);
      if (depth + 1 < by.length) walk(value, depth + 1, [...prefix, key], `${where}.${key}`);
      else out[[...prefix, key].join(PRICE_KEY_JOIN)] = micros(value, `${where}.${key}`, fail);
    }
  };
  walk(given, 0, [], at);
  return out;
}

/** Every combination of the table's values, each value through same_as. */
function combinations(keys: readonly string[][], sameAs: Readonly<Record<string, string>>): { shown: string[]; key: string }[] {
  let all: string[][] = [[]];
  for (const values of keys) all = all.flatMap((prefix) => values.map((v) => [...prefix, v]));
  return all.map((shown) => ({ shown, key: shown.map((v) => (Object.hasOwn(sameAs, v) ? sameAs[v]! : v)).join(PRICE_KEY_JOIN) }));
}

function checkQuantity(def: Definition, spec: PriceSpec, fail: Fail): void {
  const per = spec.per;
  if (spec.unit === 'second') {
    if (per) throw fail('price.per', 'a per-second price takes its seconds from duration (and supplied clips)');
    const duration = def.inputs.duration;
    if (duration?.type !== 'integer') throw fail('price.unit', 'a per-second price needs an integer input "duration"');
    if (duration.default === undefined && !duration.required)
      throw fail('inputs.duration', 'a per-second price needs a default duration (or duration required)');
    if (spec.auto_length !== undefined && !duration.auto) throw fail('price.auto_length', 'needs inputs.duration with auto: true');
    if (spec.auto_length !== undefined && spec.auto_length > duration.max)
      throw fail('price.auto_length', `must not be above the duration maximum (${duration.max})`);
    return;
  }
  if (spec.auto_length !== undefined) throw fail('price.auto_length', 'is for per-second prices');
  if (spec.with_client_video) throw fail('price.with_client_video', 'is for per-second prices');
  if (spec.unit === 'characters' && !per) throw fail('price.per', 'a per-character price names its text field: per: {field: text, block: 1000}');
  if (!per) return;
  const f = def.inputs[per.field];
  const ok = spec.unit === 'characters' ? f?.type === 'text' : f?.type === 'integer' || f?.type === 'number';
  if (!f || !ok)
    throw fail(
      'price.per.field',
      `must be ${spec.unit === 'characters' ? 'a text' : 'an integer or number'} input of ${def.id} (got ${JSON.stringify(per.field)})`,
    );
  if (f.type === 'integer' || f.type === 'number') {
    if (f.auto) throw fail('price.per.field', `${per.field} may be "auto", which has no quantity`);
    if (f.min < 0) throw fail('price.per.field', `${per.field} may be negative`);
    if (!f.required && f.default === undefined) throw fail('price.per.field', `${per.field} must be required or have a default, so every input has a quantity`);
  } else if (!f.required) {
    throw fail('price.per.field', `${per.field} must be required, so every input has a quantity`);
  }
}

/** Compiles and checks a definition's price. */
export function compilePrice(def: Definition, fail: Fail): PriceRule {
  const spec = def.price;
  checkQuantity(def, spec, fail);
  const per = spec.per ? { per: { field: spec.per.field, block: spec.per.block ?? 1 } } : {};
  if (spec.rate !== undefined) {
    if (spec.by || spec.rates || spec.same_as || spec.with_client_video)
      throw fail('price.rate', 'a flat rate goes alone: drop by, rates, same_as and with_client_video');
    return { unit: spec.unit, rates: { '*': micros(spec.rate, 'price.rate', fail) }, ...per };
  }
  if (!spec.by || !spec.rates) throw fail('price', 'needs either rate (one flat price) or by and rates (a table over enum fields)');
  const by = typeof spec.by === 'string' ? [spec.by] : spec.by;
  const keys = by.map((f, i) => keysOf(def, f, typeof spec.by === 'string' ? 'price.by' : `price.by[${i}]`, fail));
  if (by.length > 1 && keys.some((k) => k.some((v) => v.includes(PRICE_KEY_JOIN)))) throw fail('price.by', `table values may not contain "${PRICE_KEY_JOIN}"`);
  const sameAs = spec.same_as ?? {};
  for (const [value, like] of Object.entries(sameAs)) {
    if (!keys.some((k) => k.includes(value) && k.includes(like)))
      throw fail(`price.same_as.${value}`, `must map a value of ${by.join(' or ')} to another value of the same field`);
  }
  const rates = flatRates(spec.rates, keys, by, 'price.rates', fail);
  const all = combinations(keys, sameAs);
  if (all.length > MAX_COMBINATIONS) throw fail('price.by', `the table has ${all.length} combinations (at most ${MAX_COMBINATIONS})`);
  const uncovered = all.find((c) => !Object.hasOwn(rates, c.key));
  if (uncovered)
    throw fail('price.rates', `has no rate for ${by.map((f, i) => `${f} ${JSON.stringify(uncovered.shown[i])}`).join(', ')} (every valid input needs a price)`);
  const rule: { -readonly [K in keyof PriceRule]: PriceRule[K] } = { unit: spec.unit, by: by[0]!, rates, ...per };
  if (by.length > 1) rule.table = by;
  if (spec.same_as) rule.sameAs = sameAs;
  if (spec.with_client_video) {
    if (!def.inputs.video_urls) throw fail('price.with_client_video', `${def.id} takes no client video (no input video_urls)`);
    const withVideo = flatRates(spec.with_client_video, keys, by, 'price.with_client_video', fail);
    const missing = Object.keys(rates).find((k) => !Object.hasOwn(withVideo, k));
    if (missing) throw fail('price.with_client_video', `has no rate for ${JSON.stringify(missing)} (it needs the same tiers as rates)`);
    rule.withVideo = withVideo;
  }
  return rule;
}
