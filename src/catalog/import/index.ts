import { CREDENTIAL_SETTING } from '../../config.js';
import { PRICE_PLACEHOLDER } from '../compile-price.js';
import { DEFAULT_MODELS } from '../defaults.js';
import { readDefinition, problemText } from '../definitions.js';
import { MODEL_NAME } from '../format.js';
import type { ModelKind } from '../types.js';
import { renderDraft } from './draft.js';
import { readFal } from './fal.js';
import { ImportError } from './fetch.js';
import { readKie } from './kie.js';
import { readReplicate } from './replicate.js';
import type { ReadOptions, Upstream } from './upstream.js';

/**
 * `gengate models import fal:ENDPOINT | replicate:OWNER/NAME | kie:MODEL` (decision 3303): reads
 * the upstream's published input schema and listed cost, and drafts a definition (YAML) with a
 * route to that upstream and the price left for the operator to set. The draft is checked by the
 * same reader as `gengate models check` (with a stand-in price) before it is returned, so a draft
 * whose price is set loads; any failure is an ImportError and nothing is returned.
 */

export { ImportError } from './fetch.js';
export { FAL_API_URL, FAL_DOCS_URL } from './fal.js';
export { REPLICATE_API_URL } from './replicate.js';
export { KIE_DOCS_URL } from './kie.js';

/** The upstreams a draft can come from, with the setting their adapters read the credential from (src/backends, docs/backends.md). */
export const IMPORT_SOURCES = {
  fal: { keyEnv: 'FAL_KEY', read: readFal, example: 'fal:fal-ai/flux/dev' },
  replicate: { keyEnv: 'REPLICATE_API_TOKEN', read: readReplicate, example: 'replicate:black-forest-labs/flux-schnell' },
  kie: { keyEnv: 'KIE_API_KEY', read: readKie, example: 'kie:google/nano-banana-edit' },
} as const;
type Source = keyof typeof IMPORT_SOURCES;

export interface ImportRequest {
  /** `fal:ENDPOINT`, `replicate:OWNER/NAME` or `kie:MODEL`. */
  readonly source: string;
  /** The model's id in GenGate (default: the upstream's own). */
  readonly id?: string;
  readonly kind?: ModelKind;
  /** The setting holding the credential (default per upstream). */
  readonly keyEnv?: string;
  readonly baseUrl?: string;
  readonly pricingUrl?: string;
  readonly doc?: string;
  readonly secrets: Readonly<Record<string, string>>;
  /** YYYY-MM-DD, written into the draft. */
  readonly today: string;
  readonly warn: (text: string) => void;
}

export interface ImportResult {
  readonly id: string;
  /** The draft definition as YAML (comments included). */
  readonly text: string;
}

const KINDS: readonly ModelKind[] = ['image', 'video', 'audio', 'music', 'speech'];

function parseSource(source: string): { from: Source; name: string } {
  const m = /^(fal|replicate|kie):(.+)$/.exec(source.trim());
  const forms = Object.values(IMPORT_SOURCES)
    .map((s) => s.example)
    .join(', ');
  if (!m) throw new ImportError(`${JSON.stringify(source)}: name the upstream and its model, e.g. ${forms}`);
  const name = m[2]!.trim().replace(/^\/+|\/+$/g, '');
  if (!name || name.length > 300 || /[\s?#]/.test(name)) throw new ImportError(`${JSON.stringify(source)}: ${JSON.stringify(name)} is not a model name`);
  return { from: m[1] as Source, name };
}

/** Names of the shipped models: an import may not take an alias (the catalog would refuse to load), nor an id unless asked for with --id. */
function checkId(id: string, given: boolean): void {
  if (!MODEL_NAME.test(id)) {
    throw new ImportError(`the id ${JSON.stringify(id)} is not a model name (letters, digits and . _ : / -, at most 100): choose one with --id`);
  }
  for (const m of DEFAULT_MODELS) {
    if (m.aliases.includes(id)) throw new ImportError(`the id ${JSON.stringify(id)} is already a name of the shipped model ${m.id}: choose another with --id`);
    if (m.id === id && !given) {
      throw new ImportError(`the id ${JSON.stringify(id)} is a shipped model: choose another with --id, or replace the shipped model with --id ${id}`);
    }
  }
}

/** A stand-in price for the self-check: the draft must load once a price is set. */
function withPrice(text: string): string {
  return text.replace(new RegExp(`\\b${PRICE_PLACEHOLDER}\\b`, 'g'), '"0.001"');
}

export async function importModel(req: ImportRequest): Promise<ImportResult> {
  const { from, name } = parseSource(req.source);
  if (req.kind !== undefined && !KINDS.includes(req.kind)) throw new ImportError(`--kind must be one of ${KINDS.join(', ')} (got ${JSON.stringify(req.kind)})`);
  const keyEnv = req.keyEnv ?? IMPORT_SOURCES[from].keyEnv;
  if (!CREDENTIAL_SETTING.test(keyEnv)) {
    throw new ImportError(`--key-env must name a setting of capital letters, digits and _ ending in _KEY, _TOKEN or _SECRET (got ${JSON.stringify(keyEnv)})`);
  }
  const opts: ReadOptions = {
    keyEnv,
    secrets: req.secrets,
    today: req.today,
    warn: req.warn,
    ...(req.baseUrl ? { baseUrl: req.baseUrl } : {}),
    ...(req.pricingUrl ? { pricingUrl: req.pricingUrl } : {}),
    ...(req.doc ? { doc: req.doc } : {}),
    ...(req.kind ? { kind: req.kind } : {}),
  };
  let up: Upstream;
  try {
    up = await IMPORT_SOURCES[from].read(name, opts);
  } catch (e) {
    if (e instanceof ImportError && !e.message.startsWith(`${from}:`)) throw new ImportError(`${from}:${name}: ${e.message}`);
    throw e;
  }
  if (up.kind === 'music') req.warn('kind music delivers two tracks per task (as Suno does); an upstream that returns one file needs kind audio');
  const id = req.id ?? up.id;
  checkId(id, req.id !== undefined);
  const { text } = renderDraft(up, { id, command: `gengate models import ${req.source}`, keyEnv, today: req.today });
  const check = readDefinition(`${id}.yaml`, withPrice(text));
  if (!check.model) {
    throw new ImportError(
      `${from}:${name}: the draft would not load (${check.problems.map(problemText).join('; ')}); please report this with the upstream's schema`,
    );
  }
  return { id, text };
}
