import { Errors } from '../errors.js';
import type { RuleContext, Rule } from './types.js';

/**
 * Cross-field rules ("only together", "required unless"). Each throws a refusal naming the
 * fields involved and what was sent. They run on the normalised input, after every field read.
 */

/** A refusal for a field the rule needs but the client did not send. */
export function missing(ctx: RuleContext, field: string, unless = '') {
  const where = ctx.where(field);
  const def = ctx.model.fields.get(field);
  const allowed = def ? `; it must be ${def.allowed}` : '';
  return Errors.invalid(`${where.path} is required for ${where.model}${unless}${allowed} (got nothing)`);
}

/** Makes a rule from its words and its check. */
export function rule(note: string, check: Rule['check']): Rule {
  return { note, check };
}

/** Whether a normalised value counts as sent: a non-empty list, or any value. */
export function given(value: unknown): boolean {
  return Array.isArray(value) ? value.length > 0 : value !== undefined;
}

/** Where audio alone is not allowed, reference audio needs a photo or a video with it. */
export const audioNeedsPicture: Rule = rule(
  'audio_urls need a photo (image_urls or first_frame_url) or video_urls with them; audio alone is not supported.',
  (input, ctx) => {
    if (ctx.model.media.audios?.alone) return;
    if (given(input.audio_urls) && !given(input.image_urls) && !given(input.video_urls) && !given(input.first_frame_url)) {
      const where = ctx.where('audio_urls');
      throw Errors.invalid(
        `${where.path} needs at least one photo (input.image_urls or input.first_frame_url) or video (input.video_urls) with it for ${where.model}; audio alone is not supported (got audio only)`,
      );
    }
  },
);

/** A draft renders at the draft resolution whatever was asked (SPEC: "the resolution is forced to 480p"). */
export const draftForcesResolution: Rule = rule('draft true renders at the draft resolution, whatever resolution says.', (input, ctx) => {
  if (input.draft === true && ctx.model.draft) input.resolution = ctx.model.draft.resolution;
});

/**
 * Rules as data (the `rules` of a model definition, docs/decisions/3300). A condition is field →
 * value(s), its values already normalised by the field (compile.ts reads them through it), so a
 * check is a strict comparison. Each builder returns the rule with its words for docs.
 */
export type Cond = ReadonlyArray<readonly [field: string, values: readonly unknown[]]>;

export const holds = (cond: Cond, input: Record<string, unknown>) => cond.every(([f, values]) => values.includes(input[f]));
const shownValue = (v: unknown) => (typeof v === 'string' ? `"${v}"` : String(v));
const andList = (items: readonly string[]) => (items.length <= 1 ? items.join('') : `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`);
const orList = (items: readonly string[]) => (items.length <= 1 ? items.join('') : `${items.slice(0, -1).join(', ')} or ${items[items.length - 1]}`);
const inputs = (fields: readonly string[]) => fields.map((f) => `input.${f}`);

/** `input.custom_mode is true and input.instrumental is false` (`prefix` '' for docs). */
export function condWords(cond: Cond, prefix = 'input.'): string {
  return andList(cond.map(([f, values]) => `${prefix}${f} is ${orList(values.map(shownValue))}`));
}

/** What was sent for a condition that does not hold: `custom_mode false`. */
function gotWords(cond: Cond, input: Record<string, unknown>): string {
  const off = cond.filter(([f, values]) => !values.includes(input[f]));
  return off.map(([f]) => (input[f] === undefined ? `no ${f}` : `${f} ${String(input[f])}`)).join(', ');
}

/** `field` must be sent (while `when` holds, unless one of `unless` is given). */
export function required(field: string, opts: { unless?: readonly string[]; when?: Cond; because?: string; note?: string }): Rule {
  const { unless, when, because } = opts;
  const note = `${field} is required${when ? ` when ${condWords(when, '')}` : ''}${unless ? ` unless ${orList(unless)} is given` : ''}.`;
  const why = `${because ? ` (${because})` : ''}${when ? ` when ${condWords(when)}` : ''}${unless ? ` unless ${orList(inputs(unless))} is given` : ''}`;
  return rule(opts.note ?? note, (input, ctx) => {
    if (when && !holds(when, input)) return;
    if (unless?.some((u) => given(input[u]))) return;
    if (!given(input[field])) throw missing(ctx, field, why);
  });
}

/** `field` only together with every one of `others`. */
export function requires(field: string, others: readonly string[], opts: { got?: string; note?: string }): Rule {
  return rule(opts.note ?? `${field} only together with ${andList(others)}.`, (input, ctx) => {
    if (!given(input[field])) return;
    const absent = others.find((o) => !given(input[o]));
    if (absent === undefined) return;
    const where = ctx.where(field);
    throw Errors.invalid(
      `${where.path} is only accepted together with ${andList(inputs(others))} for ${where.model} (got ${opts.got ?? `input.${field} and no input.${absent}`})`,
    );
  });
}

/** `field` not together with `others`, or not while `cond` holds. */
export function excludes(field: string, others: readonly string[] | Cond, note?: string): Rule {
  if (typeof others[0] === 'string') {
    const fields = others as readonly string[];
    return rule(note ?? `${field} not together with ${orList(fields)}.`, (input, ctx) => {
      const other = given(input[field]) ? fields.find((o) => given(input[o])) : undefined;
      if (other === undefined) return;
      const where = ctx.where(field);
      throw Errors.invalid(`${where.path} cannot be sent together with ${ctx.where(other).path} for ${where.model}; send one of them (got both)`);
    });
  }
  const cond = others as Cond;
  return rule(note ?? `${field} does not apply when ${condWords(cond, '')}.`, (input, ctx) => {
    if (!given(input[field]) || !holds(cond, input)) return;
    const where = ctx.where(field);
    const got = cond.map(([f]) => `${f} ${String(input[f])}`).join(', ');
    throw Errors.invalid(`${where.path} does not apply when ${condWords(cond)} for ${where.model}; leave it out (got ${got})`);
  });
}

/** `fields` apply only while `cond` holds; a value equal to the field's default counts as not sent (so a normalised input validates again). */
export function onlyWhen(fields: readonly string[], cond: Cond, note?: string): Rule {
  const set = new Set(fields);
  return rule(note ?? `${andList(fields)} ${fields.length > 1 ? 'apply' : 'applies'} only when ${condWords(cond, '')}.`, (input, ctx) => {
    if (holds(cond, input)) return;
    for (const field of ctx.sent) {
      if (!set.has(field) || input[field] === ctx.model.fields.get(field)?.default) continue;
      const where = ctx.where(field);
      throw Errors.invalid(`${where.path} applies only when ${condWords(cond)} for ${where.model} (got ${gotWords(cond, input)})`);
    }
  });
}

/** Values of `field` that need at least one of some fields, e.g. video_mode "edit" needs a clip in video_urls. */
export function needs(field: string, table: Readonly<Record<string, { oneOf: readonly string[]; noun: string }>>, note?: string): Rule {
  // Values with the same needs share a clause of the note: `video_mode "edit" and "extend" need video_urls; "reference" needs ...`.
  const clauses = new Map<string, string[]>();
  for (const [value, need] of Object.entries(table)) {
    const key = orList(need.oneOf);
    clauses.set(key, [...(clauses.get(key) ?? []), value]);
  }
  const words = [...clauses].map(([fields, values]) => `${andList(values.map(shownValue))} ${values.length > 1 ? 'need' : 'needs'} ${fields}`);
  return rule(note ?? `${field} ${words.join('; ')}.`, (input, ctx) => {
    const value = input[field];
    const need = typeof value === 'string' && Object.hasOwn(table, value) ? table[value]! : undefined;
    if (!need || need.oneOf.some((f) => given(input[f]))) return;
    const where = ctx.where(field);
    const got = need.oneOf.length === 1 ? `no ${need.oneOf[0]}` : 'none';
    throw Errors.invalid(`${where.path} "${value}" needs at least one ${need.noun} in ${orList(inputs(need.oneOf))} for ${where.model} (got ${got})`);
  });
}
