import { z } from 'zod';
import { Errors, shown } from '../errors.js';
import { boolFrom, characterCount, exactDecimal, numberFrom } from './coerce.js';
import { checkLink, linkAllowed, MAX_LINK_LENGTH, type LinkRules } from './links.js';
import type { FieldDef, Where } from './types.js';

/**
 * Builders of input fields. Each field reads what a client sent (with the coercions of
 * DECISIONS §11), refuses with a message naming the field, the allowed values and what was
 * sent, and carries a zod schema of its normalised value for the JSON Schema in `/models`.
 */

/** The refusal every field uses: `input.x must be <allowed> for <model> (got <value>)`. */
export function refusal(where: Where, allowed: string, value: unknown, hint = '') {
  return Errors.invalid(`${where.path} must be ${allowed} for ${where.model}${hint} (got ${shown(value)})`);
}

function quoted(values: readonly (string | number)[]): string {
  return values.map((v) => (typeof v === 'string' ? `"${v}"` : String(v))).join(', ');
}

/**
 * Assembles a field: the default goes on the schema too, the description on both. The zod schema is
 * made on first use (`/models`, docs), not when a catalog is compiled: most fields of a large catalog
 * are never described, and making the schemas was most of the compile time. `extra` are kept as is.
 */
function field<E extends object = object>(
  allowed: string,
  schema: () => z.ZodType,
  opts: { default?: unknown; description: string },
  read: FieldDef['read'],
  extra?: E,
): FieldDef & E {
  let made: z.ZodType | undefined;
  return {
    ...(extra as E),
    allowed,
    description: opts.description,
    default: opts.default,
    read,
    get schema() {
      if (!made) {
        const base = schema();
        made = (opts.default === undefined ? base : base.default(opts.default as never)).describe(opts.description);
      }
      return made;
    },
  };
}

const isAutoText = (value: unknown) => typeof value === 'string' && value.trim().toLowerCase() === 'auto';

/** Free text of up to `max` characters (numbers are taken as their text). */
export function text(opts: { max: number; description: string }): FieldDef {
  const allowed = `a text of up to ${opts.max} characters`;
  return field(
    allowed,
    () => z.string().max(opts.max),
    opts,
    (value, where) => {
      const s = typeof value === 'number' && Number.isFinite(value) ? String(value) : value;
      if (typeof s !== 'string') throw refusal(where, allowed, value);
      const count = characterCount(s, opts.max);
      if (count > opts.max) {
        throw Errors.invalid(`${where.path} must be ${allowed} for ${where.model} (got a text of ${count} characters)`);
      }
      return s;
    },
  );
}

/**
 * One of a fixed list of text values, matched without regard to case; numbers match their text ("16:9" stays text).
 * `same` are other spellings taken as one of the values (`jpg` for `jpeg`, DECISIONS §18).
 */
export function choice<const V extends string>(
  values: readonly [V, ...V[]],
  opts: { default?: V; description: string; same?: Readonly<Record<string, V>> },
): FieldDef {
  const allowed = `one of ${quoted(values)}`;
  const byLower = new Map<string, V>([...values.map((v): [string, V] => [v.toLowerCase(), v]), ...Object.entries(opts.same ?? {})]);
  return field(
    allowed,
    () => z.enum(values),
    opts,
    (value, where) => {
      const s = typeof value === 'number' ? String(value) : value;
      const hit = typeof s === 'string' ? byLower.get(s.trim().toLowerCase()) : undefined;
      if (hit === undefined) throw refusal(where, allowed, value);
      return hit;
    },
  );
}

/**
 * A whole number from `min` to `max` (or one of `only`), given as a number or numeric text.
 * With `auto`, the text "auto" and -1 both mean automatic and normalise to "auto".
 */
export function whole(opts: { min: number; max: number; only?: readonly number[]; auto?: boolean; default?: number; description: string }): FieldDef {
  const range = opts.only ? `one of ${quoted(opts.only)}` : `a whole number from ${opts.min} to ${opts.max}`;
  const allowed = opts.auto ? `${range}, "auto" or -1` : range;
  const schema = () => {
    const numeric: z.ZodType = opts.only ? z.literal(opts.only as [number, ...number[]]) : z.int().min(opts.min).max(opts.max);
    return opts.auto ? z.union([numeric, z.literal('auto')]) : numeric;
  };
  return field(allowed, schema, opts, (value, where) => {
    const n = numberFrom(value);
    if (opts.auto && (n === -1 || isAutoText(value))) return 'auto';
    const fits = n !== null && Number.isInteger(n) && (opts.only ? opts.only.includes(n) : n >= opts.min && n <= opts.max);
    if (!fits) {
      const askedAuto = n === -1 || isAutoText(value);
      throw refusal(where, allowed, value, askedAuto && !opts.auto ? '; automatic length is not available for this model' : '');
    }
    return n;
  });
}

/** true or false (also as the text "true"/"false"). */
export function flag(opts: { default?: boolean; description: string }): FieldDef {
  const allowed = 'true or false';
  return field(
    allowed,
    () => z.boolean(),
    opts,
    (value, where) => {
      const b = boolFrom(value);
      if (b === null) throw refusal(where, allowed, value);
      return b;
    },
  );
}

/**
 * A number from `min` to `max` (numbers may come as text), in whole `step`s from `min` when given,
 * checked in exact decimals; with `auto` the text "auto" too (suno-v6 weights: 0 to 1 in steps of 0.05).
 */
export function decimal(opts: { min: number; max: number; step?: number; auto?: boolean; default?: number; description: string }): FieldDef {
  const range = `a number from ${opts.min} to ${opts.max}${opts.step === undefined ? '' : ` in steps of ${opts.step}`}`;
  const allowed = opts.auto ? `"auto" or ${range}` : range;
  const schema = () => (opts.auto ? z.union([z.literal('auto'), z.number().min(opts.min).max(opts.max)]) : z.number().min(opts.min).max(opts.max));
  const bounds = [exactDecimal(opts.min)!, exactDecimal(opts.max)!, exactDecimal(opts.step ?? 1)!];
  return field(allowed, schema, opts, (value, where) => {
    if (opts.auto && isAutoText(value)) return 'auto';
    const d = typeof value === 'number' || typeof value === 'string' ? exactDecimal(value) : null;
    if (!d) throw refusal(where, allowed, value);
    // Every amount at one scale, so the range and the step are whole-number checks.
    const scale = Math.max(d.scale, ...bounds.map((b) => b.scale));
    const [v, min, max, step] = [d, ...bounds].map((x) => x.digits * 10n ** BigInt(scale - x.scale)) as [bigint, bigint, bigint, bigint];
    const onStep = opts.step === undefined || (v - min) % step === 0n;
    if (v < min || v > max || !onStep) throw refusal(where, allowed, value);
    return Number(v) / 10 ** scale;
  });
}

/** A task id (of a finished draft): 1 to 128 visible characters. */
export function taskId(description: string): FieldDef {
  const allowed = 'a task id (1 to 128 characters, no spaces)';
  return field(
    allowed,
    () => z.string().min(1).max(128),
    { description },
    (value, where) => {
      if (typeof value !== 'string' || !/^[\x21-\x7e]{1,128}$/.test(value)) throw refusal(where, allowed, value);
      return value;
    },
  );
}

/** One media link (a frame); `where.links` carries the service's upload address. */
export function link(rules: LinkRules, description: string): FieldDef & { readonly rules: LinkRules } {
  const allowed = linkAllowed(rules);
  return field(
    allowed,
    () => z.string().max(MAX_LINK_LENGTH),
    { description },
    (value, where) => checkLink(value, rules, where, where.links ?? {}),
    { rules },
  );
}

/** A list of media links of one kind, at most `max` (and at least `min` when sent). */
export function links(
  rules: LinkRules,
  opts: { max: number; min?: number; description: string },
): FieldDef & { readonly rules: LinkRules; readonly max: number } {
  const min = opts.min ?? 0;
  const count = min > 0 ? `${min} to ${opts.max}` : `up to ${opts.max}`;
  const allowed = `a list of ${count} links, each ${linkAllowed(rules)}`;
  const schema = () => z.array(z.string().max(MAX_LINK_LENGTH)).min(min).max(opts.max);
  const read: FieldDef['read'] = (value, where) => {
    if (!Array.isArray(value)) throw refusal(where, allowed, value);
    if (value.length > opts.max || value.length < min) {
      throw Errors.invalid(`${where.path} must be a list of ${count} links for ${where.model} (got ${value.length} links)`);
    }
    for (let i = 0; i < value.length; i++) {
      checkLink(value[i], rules, { ...where, path: `${where.path}[${i}]` }, where.links ?? {});
    }
    return value as string[];
  };
  return field(allowed, schema, opts, read, { rules, max: opts.max });
}
