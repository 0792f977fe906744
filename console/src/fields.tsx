// The playground's fields as controls (the form as data: schema-form.ts), with uploads and their progress.
import { useState } from 'preact/hooks';
import { upload } from './api.js';
import type { FieldDef, Value } from './schema-form.js';

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

export function FieldInput({
  field,
  value,
  set,
  onUploaded,
}: {
  field: FieldDef;
  value: Value;
  set: (v: Value) => void;
  onUploaded: (url: string, seconds: number) => void;
}) {
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
      control = (
        <input
          id={id}
          name={field.name}
          type="checkbox"
          checked={value as boolean}
          onChange={(e) => set((e.target as HTMLInputElement).checked)}
          {...described}
        />
      );
      break;
    case 'number':
      control = (
        <input
          id={id}
          name={field.name}
          type="number"
          inputMode="numeric"
          min={field.min}
          max={field.max}
          value={value as string}
          onInput={text}
          {...described}
        />
      );
      break;
    case 'flex':
    case 'text':
    case 'url':
      control = (
        <input
          id={id}
          name={field.name}
          type="text"
          required={field.required}
          maxLength={field.maxLength}
          value={value as string}
          onInput={text}
          {...described}
        />
      );
      break;
    case 'textarea':
      control = (
        <textarea
          id={id}
          name={field.name}
          rows={4}
          required={field.required}
          maxLength={field.maxLength}
          value={value as string}
          onInput={text}
          {...described}
        />
      );
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
