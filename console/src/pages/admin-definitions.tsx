// Operator: models as data (decisions 3304-3307): every definition, a JSON editor to create or edit one, its problems inline, a price preview for sample inputs, retire and restore, and every version.
import { useState } from 'preact/hooks';
import { api, ApiError } from '../api.js';
import { ErrorBox, Loading, Page } from '../ui.js';
import { AdminNav, useAction, useAdmin } from './admin-shared.js';

interface DefinitionView {
  id: string;
  title: string;
  kind: string;
  source: 'file' | 'database' | 'both';
  version: number;
  retired: boolean;
  updatedAt: number | null;
  updatedBy: string | null;
}

interface DefinitionDetail extends DefinitionView {
  definition: Record<string, unknown> | null;
  file: string | null;
  versions: { version: number; action: string; who: string; note: string | null; at: number }[];
}

interface Problem {
  where: string;
  why: string;
}

const TEMPLATE = {
  title: 'My Image',
  kind: 'image',
  description: 'Text to image at 1K or 2K.',
  inputs: {
    prompt: { type: 'text', max: 4000, required: true, description: 'What the image shows.' },
    resolution: { type: 'choice', values: ['1K', '2K'], default: '1K', description: 'Size class.' },
  },
  price: { unit: 'image', by: 'resolution', rates: { '1K': '0.030', '2K': '0.045' } },
  routes: [{ backend: 'local' }],
};

const SAMPLES = [{ input: { prompt: 'a red kite' } }, { input: { prompt: 'a red kite', resolution: '2K' } }];

const path = (id: string, tail = '') => `/admin/v1/definitions/${encodeURIComponent(id)}${tail}`;
const when = (at: number) => new Date(at).toISOString().replace('T', ' ').slice(0, 19);

/** The problems of a refusal (400 with data.problems), or none. */
function problemsOf(e: unknown): Problem[] {
  const data = e instanceof ApiError ? (e.data as { problems?: Problem[] } | null | undefined) : undefined;
  return Array.isArray(data?.problems) ? data.problems : [];
}

export function AdminDefinitions() {
  const list = useAdmin<DefinitionView[]>('/admin/v1/definitions');
  const [id, setId] = useState('');
  const [text, setText] = useState('');
  const [samples, setSamples] = useState(JSON.stringify(SAMPLES, null, 2));
  const [detail, setDetail] = useState<DefinitionDetail | null>(null);
  const [problems, setProblems] = useState<Problem[]>([]);
  const [prices, setPrices] = useState<{ ok: boolean; price?: string; error?: string }[] | null>(null);
  const [parseError, setParseError] = useState('');
  const action = useAction();

  const open = async (modelId: string) => {
    const d = await action.run(`Opened ${modelId}.`, () => api<DefinitionDetail>('GET', path(modelId)));
    if (!d) return;
    setDetail(d);
    setId(d.id);
    setText(d.definition ? JSON.stringify(d.definition, null, 2) : '');
    setProblems([]);
    setPrices(null);
  };
  const fresh = () => {
    setDetail(null);
    setId('acme/my-image');
    setText(JSON.stringify(TEMPLATE, null, 2));
    setProblems([]);
    setPrices(null);
  };
  /** The editor's JSON, or null with the reason shown. */
  const parsed = (): Record<string, unknown> | null => {
    try {
      const v = JSON.parse(text) as unknown;
      setParseError(v && typeof v === 'object' && !Array.isArray(v) ? '' : 'the definition must be a JSON object');
      return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
    } catch (e) {
      setParseError(`not valid JSON: ${(e as Error).message}`);
      return null;
    }
  };
  /** Runs a call that may be refused for the definition's problems: they go inline, beside the editor. */
  const checked = async <T,>(label: string, call: () => Promise<T>): Promise<T | null> => {
    setProblems([]);
    let refused: unknown;
    const answer = await action.run(label, () =>
      call().catch((e: unknown) => {
        refused = e;
        throw e;
      }),
    );
    setProblems(problemsOf(refused));
    return answer;
  };
  const validate = async () => {
    const definition = parsed();
    if (!definition) return;
    setPrices(null);
    await checked(`${id} checks: no problems.`, () => api('POST', path(id, '/validate'), { definition }));
  };
  const preview = async () => {
    const definition = parsed();
    if (!definition) return;
    let list: unknown;
    try {
      list = JSON.parse(samples);
    } catch (e) {
      setParseError(`samples: not valid JSON: ${(e as Error).message}`);
      return;
    }
    const r = await checked('Priced.', () =>
      api<{ samples: { ok: boolean; price?: string; error?: string }[] }>('POST', path(id, '/preview'), { definition, samples: list }),
    );
    if (r) setPrices(r.samples);
  };
  const save = async () => {
    const definition = parsed();
    if (!definition) return;
    const d = await checked(`${id} saved: a new version, in force in every process within seconds.`, () =>
      api<DefinitionDetail>('PUT', path(id), { definition, expectVersion: detail?.id === id ? detail.version : 0 }),
    );
    if (d) {
      setDetail(d);
      list.reload();
    }
  };
  const change = async (what: 'retire' | 'restore') => {
    const d = await action.run(what === 'retire' ? `${id} is retired: it takes no new tasks.` : `${id} is back in force.`, () =>
      api<DefinitionDetail>('POST', path(id, `/${what}`), {}),
    );
    if (d) {
      setDetail(d);
      list.reload();
    }
  };

  return (
    <Page title="Model definitions">
      <AdminNav />
      <ErrorBox error={list.error} title="The definitions cannot be read" />
      {problems.length === 0 && <ErrorBox error={action.error} title="Refused" />}
      {action.ok && (
        <p class="alert info" role="status">
          {action.ok}
        </p>
      )}
      <p>
        <button class="primary" onClick={fresh}>
          New model
        </button>
      </p>
      {(detail || text) && (
        <section aria-label="Editor">
          <label>
            Model id <input value={id} onInput={(e) => setId((e.target as HTMLInputElement).value)} disabled={detail !== null} />
          </label>
          {detail && (
            <p class="muted small">
              {detail.retired ? 'retired' : 'in force'} · source {detail.source}
              {detail.file && ` (${detail.file})`} · stored version {detail.version}
              {!detail.definition && ' · its definition file is in force: paste a JSON definition to store one over it'}
            </p>
          )}
          <label>
            Definition (JSON, docs/model-definition.schema.json)
            <textarea rows={22} spellcheck={false} class="code" value={text} onInput={(e) => setText((e.target as HTMLTextAreaElement).value)} />
          </label>
          {parseError && (
            <p class="alert error" role="alert">
              {parseError}
            </p>
          )}
          {problems.length > 0 && (
            <ul class="alert error" role="alert" aria-label="Problems">
              {problems.map((p) => (
                <li key={`${p.where}:${p.why}`}>
                  <code>{p.where || '(top level)'}</code>: {p.why}
                </li>
              ))}
            </ul>
          )}
          <label>
            Sample inputs for the price preview (JSON list of {'{input}'})
            <textarea rows={6} spellcheck={false} class="code" value={samples} onInput={(e) => setSamples((e.target as HTMLTextAreaElement).value)} />
          </label>
          {prices && (
            <ol aria-label="Prices">
              {prices.map((p, i) => (
                <li key={i}>{p.ok ? `$${p.price}` : <span class="muted">refused: {p.error}</span>}</li>
              ))}
            </ol>
          )}
          <p>
            <button onClick={validate} disabled={action.busy}>
              Validate
            </button>{' '}
            <button onClick={preview} disabled={action.busy}>
              Preview prices
            </button>{' '}
            <button class="primary" onClick={save} disabled={action.busy}>
              Save
            </button>{' '}
            {detail && !detail.retired && (
              <button class="danger" onClick={() => change('retire')} disabled={action.busy}>
                Retire
              </button>
            )}
            {detail?.retired && (
              <button onClick={() => change('restore')} disabled={action.busy}>
                Restore
              </button>
            )}
          </p>
          {detail && detail.versions.length > 0 && (
            <ul class="plain" aria-label="Versions">
              {detail.versions.map((v) => (
                <li key={v.version}>
                  v{v.version} · {when(v.at)} · {v.action} · {v.who}
                  {v.note && ` · “${v.note}”`}
                </li>
              ))}
            </ul>
          )}
        </section>
      )}
      {!list.data && !list.error && <Loading what="definitions" />}
      {list.data && (
        <table class="tasks">
          <caption class="sr-only">Definitions</caption>
          <thead>
            <tr>
              <th scope="col">Model</th>
              <th scope="col">Source</th>
              <th scope="col">Version</th>
              <th scope="col">State</th>
            </tr>
          </thead>
          <tbody>
            {list.data.map((d) => (
              <tr key={d.id} data-model={d.id}>
                <td data-label="Model">
                  <button class="link" onClick={() => open(d.id)}>
                    {d.id}
                  </button>
                  <div class="muted small">
                    {d.title} ({d.kind})
                  </div>
                </td>
                <td data-label="Source">{d.source}</td>
                <td data-label="Version">{d.version || '—'}</td>
                <td data-label="State">
                  <span class={`badge ${d.retired ? 'off' : 'state-success'}`}>{d.retired ? 'retired' : 'in force'}</span>
                  {d.updatedBy && <div class="muted small">{d.updatedBy}</div>}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </Page>
  );
}
