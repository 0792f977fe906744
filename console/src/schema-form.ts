// The playground's form as data, made from the catalog's JSON Schema of a model's input: enums as
// selects, booleans as checkboxes, numbers with their limits, photo/video/audio links with uploads.
// Aliases (other names for the same field) are left out: the catalog words them "Alias of …",
// "Only under model …". No JSX here: the tests import it (test/console/fields.test.ts).
import type { JsonSchema } from './api.js';

export type Value = string | boolean | string[];

export interface FieldDef {
  name: string;
  kind: 'select' | 'boolean' | 'number' | 'flex' | 'text' | 'textarea' | 'url' | 'urls';
  options: string[];
  min?: number;
  max?: number;
  maxItems?: number;
  maxLength?: number;
  required: boolean;
  default: unknown;
  description: string;
  accept: string;
}

const ALIAS = /^(Alias of |Only under model |Entries \{"type")/;

const hasType = (s: JsonSchema, t: string) => s.type === t || (Array.isArray(s.type) && s.type.includes(t)) || (s.anyOf ?? []).some((a) => a.type === t);

function mediaOf(name: string): string {
  if (name.includes('video')) return 'video/*';
  if (name.includes('audio')) return 'audio/*';
  return 'image/*';
}

/** The fields of a model's input schema, in the catalog's order, aliases left out. */
export function fieldsOf(schema: JsonSchema): FieldDef[] {
  const required = new Set(schema.required ?? []);
  const out: FieldDef[] = [];
  for (const [name, s] of Object.entries(schema.properties ?? {})) {
    const description = s.description ?? '';
    if (ALIAS.test(description)) continue;
    const base = { name, required: required.has(name), default: s.default, description, options: [] as string[], accept: mediaOf(name) };
    const numeric = [s, ...(s.anyOf ?? [])].find((a) => a.type === 'integer' || a.type === 'number');
    const consts = (s.anyOf ?? []).filter((a) => a.const !== undefined).map((a) => String(a.const));
    if (s.enum) out.push({ ...base, kind: 'select', options: s.enum.map(String) });
    else if (hasType(s, 'boolean')) out.push({ ...base, kind: 'boolean' });
    else if (s.type === 'array' && s.items?.type === 'string') out.push({ ...base, kind: 'urls', maxItems: s.maxItems, min: s.minItems });
    else if (numeric && consts.length > 0) out.push({ ...base, kind: 'flex', options: consts, min: numeric.minimum, max: numeric.maximum });
    else if (numeric) out.push({ ...base, kind: 'number', min: numeric.minimum, max: numeric.maximum });
    else if (s.type === 'string' && name.endsWith('_url')) out.push({ ...base, kind: 'url', maxLength: s.maxLength });
    else if (s.type === 'string') out.push({ ...base, kind: name === 'prompt' || (s.maxLength ?? 0) > 300 ? 'textarea' : 'text', maxLength: s.maxLength });
  }
  return out;
}

export function initialValues(fields: FieldDef[]): Record<string, Value> {
  const v: Record<string, Value> = {};
  for (const f of fields) {
    if (f.kind === 'boolean') v[f.name] = f.default === true;
    else if (f.kind === 'urls') v[f.name] = [];
    else v[f.name] = f.default === undefined ? '' : String(f.default);
  }
  return v;
}

const numeric = (text: string) => /^\s*-?\d+(\.\d+)?\s*$/.test(text);

/** The createTask input: the fields that differ from their defaults, numbers as numbers. */
export function inputOf(fields: FieldDef[], values: Record<string, Value>): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  for (const f of fields) {
    const v = values[f.name];
    if (v === undefined) continue;
    if (f.kind === 'boolean') {
      if (v !== (f.default === true) || f.required) input[f.name] = v;
      continue;
    }
    if (f.kind === 'urls') {
      const list = (v as string[]).map((u) => u.trim()).filter(Boolean);
      if (list.length > 0) input[f.name] = list;
      continue;
    }
    const text = String(v).trim();
    if (text === '' || (text === String(f.default ?? '') && !f.required)) continue;
    input[f.name] = (f.kind === 'number' || f.kind === 'flex') && numeric(text) ? Number(text) : text;
  }
  return input;
}
