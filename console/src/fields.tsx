// The playground's form, made from the catalog's JSON Schema of a model's input: enums as selects,
// booleans as checkboxes, numbers with their limits, photo/video/audio links with uploads. Aliases
// (other names for the same field) are left out: the catalog words them "Alias of …", "Only under model …".
import { useState } from 'preact/hooks';
import { upload, type JsonSchema } from './api.js';

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

const label = (name: string) => name.replace(/_/g, ' ').replace(/^\w/, (c) => c.toUpperCase());

function Uploader({ field, onUploaded }: { field: FieldDef; onUploaded: (url: string, seconds: number) => void }) {
  const [progress, setProgress] = useState<{ name: string; fraction: number } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const id = `up-${field.name}`;
  const pick = async (e: Event) => {
    const input = e.target as HTMLInputElement;
    const files = [...(input.files ?? [])];
    setError(null);
    for (const file of files) {
      setProgress({ name: file.name, fraction: 0 });
      try {
        const r = await upload(file, (fraction) => setProgress({ name: file.name, fraction }));
        onUploaded(r.url, r.seconds);
      } catch (err) {
        setError(`${file.name}: ${(err as Error).message}`);
      }
    }
    setProgress(null);
    input.value = '';
  };
  return (
    <div class="uploader">
      <label for={id} class="button secondary">
        Upload {field.accept.replace('/*', '')}
        {field.kind === 'urls' ? 's' : ''}
      </label>
      <input id={id} class="file" type="file" accept={field.accept} multiple={field.kind === 'urls'} onChange={pick} data-field={field.name} />
      {progress && (
        <span class="progress" role="status">
          <progress max={1} value={progress.fraction} aria-label={`Uploading ${progress.name}`} /> {Math.round(progress.fraction * 100)}% {progress.name}
        </span>
      )}
      {error && (
        <span class="alert error inline" role="alert">
          {error}
        </span>
      )}
    </div>
  );
}

export function FieldInput({ field, value, set, onUploaded }: { field: FieldDef; value: Value; set: (v: Value) => void; onUploaded: (url: string, seconds: number) => void }) {
  const id = `in-${field.name}`;
  const hint = `${id}-hint`;
  const limits =
    field.min !== undefined && field.max !== undefined && field.kind !== 'urls'
      ? ` From ${field.min} to ${field.max}${field.options.length ? ` or ${field.options.map((o) => `"${o}"`).join(', ')}` : ''}.`
      : field.kind === 'urls' && field.maxItems !== undefined
        ? ` Up to ${field.maxItems}, one link per line.`
        : '';
  const described = { 'aria-describedby': hint };
  const text = (e: Event) => set((e.target as HTMLInputElement).value);
  let control;
  switch (field.kind) {
    case 'select':
      control = (
        <select id={id} name={field.name} value={value as string} onChange={text} {...described}>
          {field.default === undefined && <option value="">(not set)</option>}
          {field.options.map((o) => (
            <option key={o} value={o}>
              {o}
            </option>
          ))}
        </select>
      );
      break;
    case 'boolean':
      control = <input id={id} name={field.name} type="checkbox" checked={value as boolean} onChange={(e) => set((e.target as HTMLInputElement).checked)} {...described} />;
      break;
    case 'number':
      control = <input id={id} name={field.name} type="number" inputMode="numeric" min={field.min} max={field.max} value={value as string} onInput={text} {...described} />;
      break;
    case 'flex':
    case 'text':
    case 'url':
      control = <input id={id} name={field.name} type="text" required={field.required} maxLength={field.maxLength} value={value as string} onInput={text} {...described} />;
      break;
    case 'textarea':
      control = <textarea id={id} name={field.name} rows={4} required={field.required} maxLength={field.maxLength} value={value as string} onInput={text} {...described} />;
      break;
    case 'urls':
      control = (
        <textarea
          id={id}
          name={field.name}
          rows={2}
          value={(value as string[]).join('\n')}
          onInput={(e) => set((e.target as HTMLTextAreaElement).value.split('\n'))}
          {...described}
        />
      );
      break;
  }
  return (
    <div class={`field field-${field.kind}`}>
      <label for={id}>
        {label(field.name)}
        {field.required && <span aria-hidden="true"> *</span>}
        {field.required && <span class="sr-only"> (required)</span>}
      </label>
      {control}
      <small id={hint} class="muted">
        {field.description}
        {limits}
      </small>
      {(field.kind === 'url' || field.kind === 'urls') && <Uploader field={field} onUploaded={onUploaded} />}
    </div>
  );
}
