import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { ModelDef } from '../../catalog/index.js';
import { ConfigError } from '../../config.js';

/** The type a placeholder is replaced with: text, a number, or the name of a photo uploaded to the ComfyUI server. */
export type PlaceholderType = 'text' | 'number' | 'image';

interface PlaceholderDef {
  readonly type: PlaceholderType;
  /** The model input the value comes from, when the model must have it (checked at start). */
  readonly field?: string | readonly string[];
  /** The model must have a duration (a video model). */
  readonly video?: boolean;
}

/** Reference photos a workflow may take, `{{image_1}}` to `{{image_9}}`. */
export const MAX_IMAGES = 9;
/** Photo lists: `image_input` (image models), `image_urls` (reference photos of video models). */
export const PHOTO_LISTS = ['image_input', 'image_urls'] as const;

/** Every placeholder a workflow may hold (docs/backends.md "ComfyUI"). */
export const PLACEHOLDERS: Readonly<Record<string, PlaceholderDef>> = {
  prompt: { type: 'text', field: 'prompt' },
  negative_prompt: { type: 'text' },
  seed: { type: 'number' },
  width: { type: 'number' },
  height: { type: 'number' },
  duration: { type: 'number', video: true },
  fps: { type: 'number', video: true },
  frames: { type: 'number', video: true },
  first_frame: { type: 'image', field: 'first_frame_url' },
  last_frame: { type: 'image', field: 'last_frame_url' },
  task_id: { type: 'text' },
  ...Object.fromEntries(Array.from({ length: MAX_IMAGES }, (_, i) => [`image_${i + 1}`, { type: 'image', field: PHOTO_LISTS } as PlaceholderDef])),
};

/** A placeholder is a whole string value `{{name}}`; any other `{{` in a string is a mistake. */
const WHOLE = /^\{\{([a-z0-9_]+)\}\}$/;

/** A loaded workflow: the graph in ComfyUI's API format and the placeholders it holds. */
export interface Workflow {
  readonly file: string;
  readonly graph: Readonly<Record<string, unknown>>;
  readonly placeholders: ReadonlySet<string>;
}

/**
 * Reads and checks a workflow file at start: JSON, ComfyUI's API format (an object of nodes with
 * `class_type` and `inputs`, not the editor's format), every placeholder known and fed by an input the
 * model has. Any mistake is a ConfigError naming the file and the placeholder or node.
 */
export function loadWorkflow(given: string, baseDir: string, model: ModelDef, at: string): Workflow {
  const file = path.resolve(baseDir, given);
  const where = `${at}.workflow: ${file}`;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new ConfigError(`${where}: cannot be read (${(e as NodeJS.ErrnoException).code ?? String(e)})`);
  }
  let graph: unknown;
  try {
    graph = JSON.parse(text);
  } catch (e) {
    throw new ConfigError(`${where}: is not JSON (${(e as Error).message})`);
  }
  if (!graph || typeof graph !== 'object' || Array.isArray(graph)) throw new ConfigError(`${where}: must be a JSON object of nodes (ComfyUI's API format)`);
  const nodes = graph as Record<string, unknown>;
  if (Array.isArray(nodes.nodes) || Array.isArray(nodes.links)) {
    throw new ConfigError(`${where}: is a workflow in the editor's format; export it with "Export (API)" (or "Save (API Format)") in ComfyUI`);
  }
  if (Object.keys(nodes).length === 0) throw new ConfigError(`${where}: has no nodes`);
  for (const [id, node] of Object.entries(nodes)) {
    const n = node as { class_type?: unknown; inputs?: unknown } | null;
    if (!n || typeof n !== 'object' || typeof n.class_type !== 'string' || !n.inputs || typeof n.inputs !== 'object') {
      throw new ConfigError(`${where}: node ${JSON.stringify(id)} must have "class_type" and "inputs" (ComfyUI's API format)`);
    }
  }
  const placeholders = new Set<string>();
  walk(nodes, (value, spot) => {
    if (!value.includes('{{')) return;
    const name = WHOLE.exec(value)?.[1];
    if (!name) throw new ConfigError(`${where}: ${spot} holds ${JSON.stringify(value)}; a placeholder must be the whole value, like "{{prompt}}"`);
    const def = PLACEHOLDERS[name];
    if (!def) throw new ConfigError(`${where}: ${spot}: unknown placeholder {{${name}}}; known: ${Object.keys(PLACEHOLDERS).join(', ')}`);
    const fields = def.field === undefined ? [] : typeof def.field === 'string' ? [def.field] : def.field;
    if (fields.length > 0 && !fields.some((f) => model.fields.has(f))) {
      throw new ConfigError(`${where}: ${spot}: placeholder {{${name}}} needs the input ${fields.join(' or ')}, which ${model.id} does not have`);
    }
    if (def.video && !model.fields.has('duration'))
      throw new ConfigError(`${where}: ${spot}: placeholder {{${name}}} needs a video model with a duration; ${model.id} has none`);
    placeholders.add(name);
  });
  return { file, graph: nodes, placeholders };
}

/** A copy of the graph with every placeholder replaced by its value (numbers as numbers). */
export function fillWorkflow(workflow: Workflow, values: Readonly<Record<string, string | number>>): Record<string, unknown> {
  const fill = (v: unknown): unknown => {
    if (typeof v === 'string') {
      const name = WHOLE.exec(v)?.[1];
      if (!name) return v;
      const value = values[name];
      if (value === undefined) throw new Error(`no value for the placeholder {{${name}}} of ${workflow.file}`);
      return value;
    }
    if (Array.isArray(v)) return v.map(fill);
    if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, fill(x)]));
    return v;
  };
  return fill(workflow.graph) as Record<string, unknown>;
}

/** Calls `visit` for every string value with where it is, e.g. `node "6" inputs.text`. */
function walk(nodes: Record<string, unknown>, visit: (value: string, spot: string) => void): void {
  const go = (v: unknown, spot: string): void => {
    if (typeof v === 'string') visit(v, spot);
    else if (Array.isArray(v)) v.forEach((x, i) => go(x, `${spot}[${i}]`));
    else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) go(x, spot ? `${spot}.${k}` : k);
  };
  for (const [id, node] of Object.entries(nodes)) {
    const { _meta: _ignored, ...rest } = node as Record<string, unknown>;
    for (const [k, x] of Object.entries(rest)) go(x, `node ${JSON.stringify(id)} ${k}`);
  }
}
