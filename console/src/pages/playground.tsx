// The playground: pick a model, fill the form made from its input schema, see the live price, run,
// watch the state walk, see the result; copy the same request as curl or code.
import { useEffect, useMemo, useState } from 'preact/hooks';
import { api, calculate, loadModels, type ModelEntry, type Price } from '../api.js';
import { FieldInput } from '../fields.js';
import { fieldsOf, initialValues, inputOf, type FieldDef, type Value } from '../schema-form.js';
import { navigate } from '../router.js';
import { CancelButton, TaskOutcome, useLiveTask } from '../result.js';
import { snippet, type Lang } from '../snippets.js';
import { CopyButton, Empty, ErrorBox, Loading, Page, useAction } from '../ui.js';

const PRICE_FIELDS = ['resolution', 'quality', 'duration', 'generate_audio'];

/** The calculator's query for the form as it is: the price fields, photo count and uploaded video seconds. */
function priceQuery(model: ModelEntry, fields: FieldDef[], values: Record<string, Value>, seconds: Record<string, number>): URLSearchParams {
  const q = new URLSearchParams({ model: model.id });
  let images = 0;
  let videoSeconds = 0;
  for (const f of fields) {
    const v = values[f.name];
    if (PRICE_FIELDS.includes(f.name) && v !== undefined && v !== '') q.set(f.name, String(v));
    if (f.kind === 'urls') {
      const list = (v as string[]).map((u) => u.trim()).filter(Boolean);
      if (f.accept === 'image/*') images += list.length;
      if (f.accept === 'video/*') videoSeconds += list.reduce((sum, u) => sum + (seconds[u] ?? 0), 0);
    }
  }
  if (images > 0) q.set('reference_images', String(images));
  if (videoSeconds > 0) q.set('reference_video_seconds', String(videoSeconds));
  return q;
}

function Picker({ models }: { models: ModelEntry[] }) {
  const kinds: Array<ModelEntry['kind']> = ['image', 'video', 'music'];
  return (
    <>
      {kinds.map((kind) => (
        <section key={kind}>
          <h2>{kind === 'music' ? 'Music' : kind === 'image' ? 'Images' : 'Videos'}</h2>
          <ul class="models">
            {models
              .filter((m) => m.kind === kind)
              .map((m) => (
                <li key={m.id} class="card">
                  <a href={`/playground?model=${encodeURIComponent(m.id)}`}>
                    <strong>{m.title}</strong>
                  </a>
                  <code>{m.id}</code>
                  <span class="muted">{m.pricing.display}</span>
                  {!m.enabled && <span class="badge off">disabled</span>}
                </li>
              ))}
          </ul>
        </section>
      ))}
    </>
  );
}

function Snippets({ body }: { body: unknown }) {
  const [lang, setLang] = useState<Lang>('curl');
  const text = snippet(lang, location.origin, body);
  return (
    <details class="card snippets">
      <summary>Copy as curl / as code</summary>
      <div class="row">
        <label for="snippet-lang">Language</label>
        <select id="snippet-lang" value={lang} onChange={(e) => setLang((e.target as HTMLSelectElement).value as Lang)}>
          <option value="curl">curl</option>
          <option value="javascript">JavaScript (fetch)</option>
          <option value="python">Python</option>
        </select>
        <CopyButton text={text} selectId="snippet" />
      </div>
      <pre id="snippet" class="code" tabIndex={0} aria-label={`The request as ${lang}`}>
        {text}
      </pre>
      <small class="muted">Set GENGATE_API_KEY to an API key of this account (one with the scope tasks:write).</small>
    </details>
  );
}

function Runner({ model }: { model: ModelEntry }) {
  const fields = useMemo(() => fieldsOf(model.parameters), [model]);
  const [values, setValues] = useState<Record<string, Value>>(() => initialValues(fields));
  const [seconds, setSeconds] = useState<Record<string, number>>({});
  const [price, setPrice] = useState<Price | null>(null);
  const [taskId, setTaskId] = useState<string | null>(null);
  const [generation, setGeneration] = useState(0);
  const { busy, error, run: act } = useAction();
  const { task, error: pollError } = useLiveTask(taskId, generation);
  const input = inputOf(fields, values);
  const body = { model: model.id, input };
  const query = priceQuery(model, fields, values, seconds).toString();

  useEffect(() => {
    let live = true;
    const timer = setTimeout(() => {
      calculate(new URLSearchParams(query)).then(
        (p) => live && setPrice(p),
        () => live && setPrice({ ok: false, error: { message: 'the calculator cannot be reached', field: null } }),
      );
    }, 200);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [query]);

  const set = (name: string) => (v: Value) => setValues((old) => ({ ...old, [name]: v }));
  const uploaded = (f: FieldDef) => (url: string, secs: number) => {
    setSeconds((old) => ({ ...old, [url]: secs }));
    setValues((old) => {
      if (f.kind === 'url') return { ...old, [f.name]: url };
      const list = (old[f.name] as string[]).filter((u) => u.trim());
      return { ...old, [f.name]: [...list, url] };
    });
  };
  const run = (e: Event) => {
    e.preventDefault();
    void act(async () => {
      const r = await api<{ taskId: string }>('POST', '/api/v1/jobs/createTask', body);
      setGeneration(0);
      setTaskId(r.taskId);
    });
  };

  return (
    <div class="playground">
      <form class="card" onSubmit={run} aria-label={`Input of ${model.id}`}>
        <p class="muted">{model.description}</p>
        {!model.enabled && (
          <div class="alert error" role="alert" data-testid="disabled">
            The operator has disabled {model.id}: it cannot run now.
          </div>
        )}
        {fields.map((f) => (
          <FieldInput key={f.name} field={f} value={values[f.name]!} set={set(f.name)} onUploaded={uploaded(f)} />
        ))}
        <div class="run-row">
          <p class="price" aria-live="polite" data-testid="price">
            {price === null ? 'Pricing…' : price.ok ? `Price: ${price.price_display}` : `No price: ${price.error.message}`}
          </p>
          <button type="submit" class="primary" disabled={busy || !model.enabled}>
            {busy ? 'Starting…' : 'Run'}
          </button>
        </div>
        <ErrorBox error={error} title="Not started" />
      </form>
      <div>
        <Snippets body={body} />
        {taskId && (
          <section class="card" aria-label="The run">
            <h2>
              Task <a href={`/tasks/${encodeURIComponent(taskId)}`}>{taskId}</a>
            </h2>
            <ErrorBox error={pollError} title="The state cannot be read" />
            {task ? <TaskOutcome task={task} kind={model.kind} /> : <Loading what="the task" />}
            {task && <CancelButton task={task} onCancelled={() => setGeneration((g) => g + 1)} />}
          </section>
        )}
      </div>
    </div>
  );
}

export function Playground({ model: wanted }: { model: string | null }) {
  const [models, setModels] = useState<ModelEntry[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => void loadModels(true).then(setModels, setError), []);
  const model = wanted ? models?.find((m) => m.id === wanted || m.aliases.includes(wanted)) : undefined;
  return (
    <Page title={model ? `Playground: ${model.title}` : 'Playground'}>
      <ErrorBox error={error} title="The models cannot be read" />
      {!models && !error && <Loading what="the models" />}
      {models && (
        <div class="row">
          <label for="pick-model">Model</label>
          <select
            id="pick-model"
            value={model?.id ?? ''}
            onChange={(e) => navigate(`/playground?model=${encodeURIComponent((e.target as HTMLSelectElement).value)}`)}
          >
            <option value="">Choose a model</option>
            {models.map((m) => (
              <option key={m.id} value={m.id}>
                {m.id} ({m.kind}){m.enabled ? '' : ' — disabled'}
              </option>
            ))}
          </select>
        </div>
      )}
      {models && wanted && !model && <Empty>There is no model {wanted}.</Empty>}
      {models && !wanted && <Picker models={models} />}
      {model && <Runner key={model.id} model={model} />}
    </Page>
  );
}
