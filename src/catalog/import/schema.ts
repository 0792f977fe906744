import type { FieldSpec } from '../format.js';
import { ImportError, isObject } from './fetch.js';
import { linkKind, type LinkKind } from './guess.js';

/**
 * An upstream's input JSON Schema (an OpenAPI `components.schemas` object) → the `inputs` of a
 * definition (decision 3303): string → text, enum → choice, integer and number with their range,
 * boolean, links → media (the kind guessed from the name and said so), descriptions, defaults,
 * required fields and the upstream's order kept. What a definition cannot say is left out with a
 * note (refused when the upstream requires it); fields that set how many files a run makes are
 * pinned to one by the route's map, as GenGate delivers one file per task.
 */

type Json = Record<string, unknown>;

/** One input of the draft, with the notes written above it. */
export interface DraftField {
  readonly name: string;
  readonly spec: FieldSpec;
  readonly notes: readonly string[];
}

export interface MappedInputs {
  readonly fields: readonly DraftField[];
  /** Upstream fields not imported, each with its reason (a comment above `inputs`). */
  readonly left: readonly string[];
  /** Constants the route sends (`map.set`): the output-count fields pinned to one. */
  readonly set: Readonly<Record<string, unknown>>;
  /** GenGate name → upstream name (`map.rename`): clip lists GenGate knows only as video_urls / audio_urls. */
  readonly rename: Readonly<Record<string, string>>;
}

/** Where the upstream says its fields' order: fal's `x-fal-order-properties`, Replicate's `x-order` on each, or the document's own order. */
export type Order = 'fal' | 'replicate' | 'declared';

/** Fields that ask for several outputs in one run: GenGate delivers one file per task, so the route sends 1. */
const COUNT_FIELD = /^(num_(images|outputs|videos|samples)|number_of_(images|outputs|videos)|n|max_images|batch_size)$/;
/** Input field names a definition takes (format.ts FIELD). */
const FIELD_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
/** Bounds written when the upstream states none (flagged in a note). */
const UNBOUNDED = Number.MAX_SAFE_INTEGER;
const TEXT_MAX = 10_000;
const LINK_MAX = 2_000;
const LIST_MAX = 10;
const CLIP_SECONDS = 30;

/** Resolves local `$ref`s (`#/components/schemas/X`) against the document they came from. */
export function resolver(root: Json): (node: unknown) => Json {
  const resolve = (node: unknown, depth = 0): Json => {
    if (!isObject(node)) return {};
    const ref = node.$ref;
    if (typeof ref !== 'string') return node;
    if (depth > 20 || !ref.startsWith('#/')) throw new ImportError(`the schema refers to ${ref}, which the document does not hold`);
    let at: unknown = root;
    for (const part of ref.slice(2).split('/')) at = isObject(at) ? at[part.replace(/~1/g, '/').replace(/~0/g, '~')] : undefined;
    if (!isObject(at)) throw new ImportError(`the schema refers to ${ref}, which the document does not hold`);
    const { $ref: _ref, ...own } = node;
    return { ...resolve(at, depth + 1), ...own };
  };
  return (node) => resolve(node);
}

/** A property with its references, allOf and nullable anyOf folded into one schema; `other` names branches left out. */
function flatten(prop: unknown, resolve: (n: unknown) => Json): { schema: Json; other?: string } {
  let s = resolve(prop);
  if (Array.isArray(s.allOf)) {
    const { allOf, ...own } = s;
    s = Object.assign({}, ...(allOf as unknown[]).map((p) => flatten(p, resolve).schema), own) as Json;
  }
  for (const key of ['anyOf', 'oneOf'] as const) {
    if (!Array.isArray(s[key])) continue;
    const { [key]: branches, ...own } = s;
    const options = (branches as unknown[]).map((b) => flatten(b, resolve).schema).filter((b) => b.type !== 'null');
    const pick = options.find((b) => Array.isArray(b.enum)) ?? (options.length === 1 ? options[0] : undefined);
    if (!pick) return { schema: { ...own, type: 'object' }, other: 'one of several shapes' };
    const other = options.length > 1 ? options.filter((b) => b !== pick).map((b) => String(b.title ?? b.type ?? 'another shape')) : [];
    s = { ...pick, ...own };
    if (other.length > 0) return { schema: s, other: other.join(', ') };
  }
  if (Array.isArray(s.type)) s = { ...s, type: (s.type as unknown[]).find((t) => t !== 'null') };
  return { schema: s };
}

const words = (s: unknown, max: number): string | undefined => {
  if (typeof s !== 'string') return undefined;
  const t = s.replace(/\s+/g, ' ').trim();
  return t ? (t.length > max ? `${t.slice(0, max - 1)}…` : t) : undefined;
};
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

/** min and max of a number schema (OpenAPI 3.0's boolean exclusive bounds and 3.1's numeric ones). */
function range(s: Json, integer: boolean): { min: number; max: number; stated: boolean } {
  let min = num(s.minimum);
  let max = num(s.maximum);
  const exMin = num(s.exclusiveMinimum) ?? (s.exclusiveMinimum === true ? min : undefined);
  const exMax = num(s.exclusiveMaximum) ?? (s.exclusiveMaximum === true ? max : undefined);
  if (exMin !== undefined) min = integer ? Math.floor(exMin) + 1 : exMin;
  if (exMax !== undefined) max = integer ? Math.ceil(exMax) - 1 : exMax;
  return { min: min ?? -UNBOUNDED, max: max ?? UNBOUNDED, stated: min !== undefined && max !== undefined };
}

type Built = { spec: FieldSpec; notes: string[]; clip?: 'video' | 'audio' } | { skip: string } | { pin: unknown };
/** What earlier fields took: the one list of photos, and the clip lists. */
interface State {
  photoList?: string;
  clip?: Set<string>;
}

/** One property → a field spec (without the common description/required/label), or why it is left out. */
function build(name: string, s: Json, other: string | undefined, state: State): Built {
  const notes: string[] = other ? [`the upstream also takes ${other}, which this draft does not offer`] : [];
  const type = s.type ?? (Array.isArray(s.enum) ? typeof s.enum[0] : undefined);
  const enumValues = Array.isArray(s.enum) ? s.enum.filter((v) => v !== null) : undefined;
  if (COUNT_FIELD.test(name) && (type === 'integer' || type === 'number')) {
    const { min, max } = range(s, true);
    return { pin: min <= 1 && max >= 1 ? 1 : min };
  }
  if (type === 'boolean') return { spec: { type: 'boolean', description: '' }, notes };
  if (type === 'integer' || type === 'number') {
    const integer = type === 'integer' && (enumValues ?? []).every((v) => Number.isInteger(v));
    const r = range(s, integer);
    if (enumValues?.length) {
      const values = enumValues.filter((v): v is number => typeof v === 'number');
      r.min = Math.min(...values);
      r.max = Math.max(...values);
      r.stated = true;
      if (integer) return { spec: { type: 'integer', min: r.min, max: r.max, only: values, description: '' }, notes };
      notes.push(`the upstream allows only ${values.join(', ')}; a number input takes any value from ${r.min} to ${r.max}`);
    }
    if (!r.stated)
      notes.push(
        `the upstream states no ${r.min === -UNBOUNDED && r.max === UNBOUNDED ? 'range' : r.min === -UNBOUNDED ? 'minimum' : 'maximum'}: set min and max`,
      );
    const step = num(s.multipleOf);
    const spec: FieldSpec = integer
      ? { type: 'integer', min: r.min, max: r.max, description: '' }
      : { type: 'number', min: r.min, max: r.max, ...(step && step > 0 && r.min > -UNBOUNDED ? { step } : {}), description: '' };
    return { spec, notes };
  }
  if (type === 'string' && enumValues?.length) {
    const values = [...new Set(enumValues.map(String))];
    if (new Set(values.map((v) => v.toLowerCase())).size !== values.length) return { skip: 'its values differ only in case, which a choice cannot tell apart' };
    if (values.length > 500 || values.some((v) => v.length > 200)) return { skip: 'it has more (or longer) values than a choice takes' };
    return { spec: { type: 'choice', values, description: '' }, notes };
  }
  const list = type === 'array';
  const item = list ? (isObject(s.items) ? s.items : {}) : s;
  if (list && item.type !== 'string') return { skip: `a list of ${String(item.type ?? 'objects')}, which a definition cannot take` };
  if (!list && type !== 'string') return { skip: `a value of type ${String(type ?? 'any')}, which a definition cannot take` };
  const link = linkKind(name, s, item);
  if (!link) {
    if (list) return { skip: 'a list of texts, which a definition cannot take' };
    const max = num(s.maxLength);
    if (max === undefined) notes.push(`the upstream states no length limit: max is ${TEXT_MAX}, adjust it`);
    return { spec: { type: 'text', max: max ?? TEXT_MAX, description: '' }, notes };
  }
  return media(name, s, list, link, notes, state);
}

/** A link or a list of links: photos become media inputs, clips the clip lists GenGate knows, others text. */
function media(name: string, s: Json, list: boolean, link: LinkKind, notes: string[], state: State): Built {
  notes.push(`accepts ${link.kind ?? 'a link'}: ${link.why}; confirm`);
  const mb = /max(?:imum)?\s*(?:file\s*)?size[^\d]{0,12}([\d.]+)\s*MB/i.exec(String(s.description ?? ''));
  const uploadMb = mb ? Math.max(1, Math.floor(Number(mb[1]))) : undefined;
  const count = () => {
    const max = num(s.maxItems);
    if (max === undefined) notes.push(`the upstream states no largest number of links: count.max is ${LIST_MAX}, adjust it`);
    const min = num(s.minItems);
    return { ...(min ? { min } : {}), max: Math.min(100, Math.max(1, max ?? LIST_MAX)) };
  };
  if (link.kind === 'image') {
    if (!list) return { spec: { type: 'media', accepts: 'image', ...(uploadMb ? { upload_mb: uploadMb } : {}), description: '' }, notes };
    if (state.photoList) return { skip: `a second list of photos (a model has one, already ${state.photoList})` };
    state.photoList = name;
    return { spec: { type: 'media', accepts: 'image', count: count(), ...(uploadMb ? { upload_mb: uploadMb } : {}), description: '' }, notes };
  }
  if (link.kind && list) {
    if (state.clip?.has(link.kind)) return { skip: `a second list of ${link.kind} clips (GenGate has one, named ${link.kind}_urls)` };
    (state.clip ??= new Set()).add(link.kind);
    notes.push(`GenGate checks, trims and bills clips by seconds: seconds.total is ${CLIP_SECONDS}, set what the upstream takes`);
    const seconds = { total: CLIP_SECONDS };
    return {
      spec: { type: 'media', accepts: link.kind, count: count(), seconds, ...(uploadMb ? { upload_mb: uploadMb } : {}), description: '' },
      notes,
      clip: link.kind,
    };
  }
  if (list) return { skip: 'a list of links of an unknown kind, which a definition cannot take' };
  notes.push(
    link.kind
      ? `a single ${link.kind} link is kept as text (GenGate's ${link.kind} inputs are lists named ${link.kind}_urls): it is passed on unchecked`
      : 'kept as text: passed on unchecked',
  );
  return { spec: { type: 'text', max: LINK_MAX, description: '' }, notes };
}

/** A default the field takes as it is (a choice value, a number in range, a boolean); others are left to the upstream. */
function withDefault(spec: FieldSpec, value: unknown): FieldSpec {
  if (value === undefined || value === null) return spec;
  switch (spec.type) {
    case 'choice':
      return spec.values.includes(String(value)) && typeof value !== 'object' ? { ...spec, default: String(value) } : spec;
    case 'integer':
      return Number.isInteger(value) && (value as number) >= spec.min && (value as number) <= spec.max && (!spec.only || spec.only.includes(value as number))
        ? { ...spec, default: value as number }
        : spec;
    case 'number':
      return typeof value === 'number' && value >= spec.min && value <= spec.max ? { ...spec, default: value } : spec;
    case 'boolean':
      return typeof value === 'boolean' ? { ...spec, default: value } : spec;
    default:
      return spec;
  }
}

/** Property names in the upstream's order. */
function ordered(schema: Json, props: Json, order: Order): string[] {
  const names = Object.keys(props);
  if (order === 'fal' && Array.isArray(schema['x-fal-order-properties'])) {
    const listed = (schema['x-fal-order-properties'] as unknown[]).filter((n): n is string => typeof n === 'string' && n in props);
    return [...listed, ...names.filter((n) => !listed.includes(n))];
  }
  if (order === 'replicate') {
    const at = (n: string) => num((props[n] as Json)['x-order']) ?? Number.MAX_SAFE_INTEGER;
    return [...names].sort((a, b) => at(a) - at(b));
  }
  return names;
}

/** The inputs of an upstream's input object schema; `omit` names the upstream's plumbing fields (with why) that are never imported. */
export function mapInputs(schema: Json, resolve: (n: unknown) => Json, order: Order, omit: Readonly<Record<string, string>> = {}): MappedInputs {
  const props = isObject(schema.properties) ? schema.properties : undefined;
  if (!props || Object.keys(props).length === 0) throw new ImportError('the input schema has no properties');
  const required = new Set(Array.isArray(schema.required) ? schema.required.filter((r): r is string => typeof r === 'string') : []);
  const fields: DraftField[] = [];
  const left: string[] = [];
  const set: Record<string, unknown> = {};
  const rename: Record<string, string> = {};
  const state: State = {};
  for (const name of ordered(schema, props, order)) {
    const { schema: s, other } = flatten(props[name], resolve);
    const refuse = (why: string) => {
      if (required.has(name)) throw new ImportError(`the upstream requires ${name}, ${why}`);
      left.push(`${name}: not imported, ${why}`);
    };
    if (omit[name] !== undefined) {
      left.push(`${name}: not imported, ${omit[name]}`);
      continue;
    }
    if (!FIELD_NAME.test(name)) {
      refuse('a name a definition cannot have (letters, digits and _)');
      continue;
    }
    const built = build(name, s, other, state);
    if ('skip' in built) {
      refuse(built.skip);
      continue;
    }
    if ('pin' in built) {
      set[name] = built.pin;
      left.push(`${name}: sent as ${String(built.pin)} by the route (GenGate delivers one file per task)`);
      continue;
    }
    const gengateName = built.clip ? `${built.clip}_urls` : name;
    if (gengateName !== name && gengateName in props) {
      refuse(`a list of ${built.clip} clips, which GenGate takes only as ${gengateName}, a name the upstream uses for another input`);
      continue;
    }
    if (gengateName !== name) {
      rename[gengateName] = name;
      built.notes.push(`the upstream's ${name}: GenGate knows this list as ${gengateName}, and the route renames it back`);
    }
    const description = words(s.description, 2000) ?? words(s.title, 2000) ?? `The upstream's ${name}.`;
    const label = typeof s.title === 'string' && s.title.trim() && s.title !== name ? words(s.title, 80) : undefined;
    const { description: _none, ...own } = withDefault(built.spec, s.default);
    const spec = { ...own, ...(required.has(name) ? { required: true } : {}), description, ...(label ? { label } : {}) } as FieldSpec;
    if (s.default !== undefined && s.default !== null && !('default' in spec) && built.spec.type !== 'text' && built.spec.type !== 'media') {
      built.notes.push(`the upstream's default ${JSON.stringify(s.default)} is not a value of this input: left to the upstream`);
    }
    fields.push({ name: gengateName, spec, notes: built.notes });
  }
  if (fields.length === 0) throw new ImportError(`none of the upstream's inputs can be imported (${left.join('; ')})`);
  return { fields, left, set, rename };
}
