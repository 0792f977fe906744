import { Document, isMap, isScalar, visit, type Pair, type YAMLMap } from 'yaml';
import { draftPrice } from './price.js';
import type { Upstream } from './upstream.js';

/**
 * The draft definition of an imported model as YAML (decision 3303): the format of decision 3300,
 * with comments where the operator has something to do or to confirm: where it was read, the
 * guessed kind, every guessed or defaulted input, the fields left out, the upstream's cost beside
 * the placeholder price, and the route (the upstream's own input names sent as they are).
 */

/** Maps written on one line: `count: { max: 10 }`, `seconds: { total: 30 }`, the route's map. */
const FLOW_KEYS = new Set(['count', 'seconds', 'each', 'rename', 'set']);

export interface DraftOptions {
  /** The id of the model (the upstream's own unless the operator gave --id). */
  readonly id: string;
  /** The command as typed, for the header. */
  readonly command: string;
  readonly keyEnv: string;
  readonly today: string;
}

/** The definition (as data) and the notes to write into it. */
function compose(up: Upstream, opts: DraftOptions) {
  const { price, notes: priceNotes, rowNotes } = draftPrice(up);
  const map: Record<string, unknown> = {};
  if (Object.keys(up.inputs.rename).length > 0) map.rename = up.inputs.rename;
  if (Object.keys(up.inputs.set).length > 0) map.set = up.inputs.set;
  const route = { backend: up.backend, model: up.routeModel, key_env: opts.keyEnv, as_is: true, ...(Object.keys(map).length > 0 ? { map } : {}) };
  const definition = {
    id: opts.id,
    title: up.title,
    kind: up.kind,
    description: up.description,
    inputs: Object.fromEntries(up.inputs.fields.map((f) => [f.name, f.spec])),
    price,
    routes: [route],
  };
  const routeNotes = [
    `as_is: the inputs above carry ${up.backend}'s own names and are sent as validated${Object.keys(map).length > 0 ? ', then renamed and set by map' : ''}.`,
    `The credential is read from the setting ${opts.keyEnv}; add { backend: local } after this route only for demos (it renders placeholders).`,
    ...up.routeNotes,
  ];
  return { definition, priceNotes, rowNotes, routeNotes };
}

function pairOf(map: unknown, key: string): Pair | undefined {
  return isMap(map) ? (map as YAMLMap).items.find((p) => isScalar(p.key) && p.key.value === key) : undefined;
}

/** Puts `lines` as a comment above the key `key` of `map`. */
function above(map: unknown, key: string, lines: readonly string[]): void {
  const pair = pairOf(map, key);
  if (pair && isScalar(pair.key) && lines.length > 0) pair.key.commentBefore = lines.map((l) => ` ${l}`).join('\n');
}

/** The YAML text of the draft. */
export function renderDraft(up: Upstream, opts: DraftOptions): { text: string; definition: Record<string, unknown> } {
  const { definition, priceNotes, rowNotes, routeNotes } = compose(up, opts);
  const doc = new Document(definition);
  doc.commentBefore = [
    ` Drafted by \`${opts.command}\` on ${opts.today}`,
    ` from ${up.from}`,
    ' Before use: set the price (SET-PRICE below), read every note, then run `gengate models check` on this file',
    ' (docs/models.md "Import from an upstream"; the format: docs/model-definition.schema.json).',
  ].join('\n');
  const root = doc.contents;
  above(root, 'title', ['TODO: title and description in your words.']);
  above(root, 'kind', [`kind: ${up.kindWhy}.`]);
  const inputs = pairOf(root, 'inputs')?.value;
  above(root, 'inputs', up.inputs.left.length > 0 ? ["Left out of the upstream's inputs:", ...up.inputs.left.map((l) => `- ${l}`)] : []);
  for (const f of up.inputs.fields)
    above(
      inputs,
      f.name,
      f.notes.map((n) => `TODO: ${n}`),
    );
  above(root, 'price', priceNotes);
  const rates = pairOf(pairOf(root, 'price')?.value, 'rates')?.value;
  for (const [key, note] of Object.entries(rowNotes)) {
    const pair = pairOf(rates, key);
    if (pair && isScalar(pair.value)) pair.value.comment = ` ${note}`;
  }
  above(root, 'routes', routeNotes);
  // Short lists and small maps on one line, as the shipped definitions write them.
  visit(doc, {
    Pair(_, pair) {
      if (isScalar(pair.key) && FLOW_KEYS.has(String(pair.key.value)) && isMap(pair.value)) pair.value.flow = true;
    },
    Seq(_, node) {
      if (node.items.every((i) => isScalar(i))) node.flow = true;
    },
    // '16:9' and '5' stay text for every YAML reader (YAML 1.1 reads 16:9 as a number).
    Scalar(_, node) {
      if (typeof node.value === 'string' && /^[0-9][0-9.:]*$/.test(node.value)) node.type = 'QUOTE_SINGLE';
    },
  });
  return { text: doc.toString({ lineWidth: 120, minContentWidth: 40 }), definition };
}
