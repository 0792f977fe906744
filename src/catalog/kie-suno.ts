import { withAlias, parseInputMap } from './mapping.js';
import type { Catalog, InputMap, ModelDef } from './types.js';

/**
 * kie.ai's Suno endpoint `POST /api/v1/generate` (KIE.md §3, DECISIONS §18, decision 0404) as
 * data: its body names brought to suno-v6's fields in the input-mapping format of the kie.ai
 * aliases (decision 0400), and its `model` values brought to suno-v6's `version`. The request
 * side (src/tasks/suno.ts) applies the mapping through the catalog's own validation, so a Suno
 * body is checked and priced exactly like the suno-v6 body it maps to.
 */

/** kie.ai's Suno `model` values and the suno-v6 `version` each one is (all exact: no value is sold as another version). */
export const KIE_SUNO_VERSIONS: Readonly<Record<string, string>> = {
  V4: 'v4',
  V4_5: 'v4.5',
  V4_5PLUS: 'v4.5-plus',
  V4_5ALL: 'v4.5-all',
  V5: 'v5',
  V5_5: 'v5.5',
  V6: 'v6',
  V6_WILD: 'v6-wild',
  V6_MINI: 'v6-mini',
};

/** The Suno endpoint: the name its mapping goes by in messages, the model, and the body names in the catalog file's mapping format. */
export const KIE_SUNO = {
  name: 'kie.ai Suno',
  model: 'suno-v6',
  input: {
    customMode: 'custom_mode',
    negativeTags: 'negative_tags',
    vocalGender: { to: 'vocal_gender', values: { m: 'male', f: 'female' } },
    styleWeight: 'style_weight',
    weirdnessConstraint: 'weirdness_constraint',
    audioWeight: 'audio_weight',
    model: { to: 'version', values: KIE_SUNO_VERSIONS },
  },
} as const;

/** Every name of the Suno body (callBackUrl aside), in kie.ai's documented order; prompt, instrumental, style and title are suno-v6 fields of the same name. */
export const KIE_SUNO_FIELDS: readonly string[] = [
  'prompt',
  'customMode',
  'instrumental',
  'model',
  'style',
  'title',
  'negativeTags',
  'vocalGender',
  'styleWeight',
  'weirdnessConstraint',
  'audioWeight',
];

/** The mapping checked against the model as the catalog has it (a mapping that does not fit is a programming error). */
function sunoMap(model: ModelDef): InputMap {
  return parseInputMap(model, KIE_SUNO.input, KIE_SUNO.name, (where, why) => new Error(`src/catalog/kie-suno.ts: ${where}: ${why}`));
}

/**
 * A view of `catalog` in which the Suno endpoint's name is an alias of suno-v6 carrying the
 * mapping, so `validateInput`, the price and every message work as for a kie.ai model id; any
 * other name (and the model switches) reads the live catalog. Undefined when suno-v6 is not in it.
 */
export function withKieSuno(catalog: Catalog): Catalog | undefined {
  const base = catalog.find(KIE_SUNO.model);
  if (!base) return undefined;
  const model = withAlias(base, KIE_SUNO.name, sunoMap(base));
  return {
    get models() {
      return catalog.models;
    },
    find: (name) => (name === KIE_SUNO.name ? model : catalog.find(name)),
  };
}
