import { fileURLToPath } from 'node:url';
import { ConfigError } from '../config.js';
import { problemText, readDefinitions } from './definitions.js';
import type { ModelDef } from './types.js';

/**
 * The default catalog: the definition files of catalog/ at the package root (the same folder from
 * src/ and from dist/), read once when this module loads. A broken shipped definition stops the
 * start with file:line and the reason.
 */

/** The folder of the shipped definitions. */
export const DEFAULT_CATALOG_DIR = fileURLToPath(new URL('../../catalog/', import.meta.url));
/** The shipped kie.ai market models (kie.ai's ids, input names and list prices; decision 3310), after the built-in ones. */
export const KIE_MARKET_DIR = fileURLToPath(new URL('../../catalog/kie/', import.meta.url));

const read = readDefinitions([DEFAULT_CATALOG_DIR, KIE_MARKET_DIR]);
if (read.problems.length > 0) throw new ConfigError(`the shipped catalog is broken:\n${read.problems.map(problemText).join('\n')}`);

/** The shipped models: the built-in ones in file name order (SPEC "Known values of the model field"), then the kie.ai market's. */
export const DEFAULT_MODELS: readonly ModelDef[] = read.models;

/** One kie.ai id: the GenGate model it names and its input mapping (the JSON format of the catalog file). */
export interface KieAlias {
  readonly name: string;
  readonly model: string;
  readonly input: Readonly<Record<string, unknown>>;
}

/**
 * The kie.ai ids of the shipped definitions (aliases with `dialect: kie`) and their input mappings
 * (KIE.md §1–§2, decision 0400). A `kie` upstream (DECISIONS §19) reads the same rows backwards:
 * one table, both directions.
 */
export const KIE_ALIASES: readonly KieAlias[] = read.definitions.flatMap((d) =>
  (d.aliases ?? []).flatMap((a) => (typeof a !== 'string' && a.dialect === 'kie' ? [{ name: a.name, model: d.id, input: a.input ?? {} }] : [])),
);

/** kie.ai ids whose `output_format` spells JPEG "jpg" (`upstream_values: {output_format: {jpeg: jpg}}`): a kie upstream sends "jpg" to them. */
export const KIE_JPG_IDS: ReadonlySet<string> = new Set(
  read.definitions.flatMap((d) =>
    (d.aliases ?? []).flatMap((a) => (typeof a !== 'string' && a.upstream_values?.output_format?.jpeg === 'jpg' ? [a.name] : [])),
  ),
);
