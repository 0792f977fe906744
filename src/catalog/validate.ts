import { Errors, shown } from '../errors.js';
import { modelNames } from './catalog.js';
import { readDraftFinal } from './draft.js';
import type { LinkOptions } from './links.js';
import { planMedia, type MediaCheck } from './media.js';
import { acceptedNames, mapSent } from './mapping.js';
import type { Catalog, InputMap, MediaFacts, ModelDef, RuleContext, Where } from './types.js';

/** A validated createTask input: the canonical model id and the normalised input. */
export interface ValidatedInput {
  readonly model: string;
  /** Aliases folded, coercions applied, defaults filled, empty values and empty lists left out. */
  readonly input: Record<string, unknown>;
  /** True for a draft final (`draft_task_id`): `input` holds only the id and the fields it changes; see resolveDraftFinal. */
  readonly draftFinal: boolean;
  /** Present when media facts were given: the trim plan and the facts with trimmed seconds. */
  readonly media?: MediaCheck;
}

/** Field aliases of DECISIONS §11 (tools is read separately). */
const FIELD_ALIASES: Readonly<Record<string, string>> = { size: 'aspect_ratio', omni_reference_task_type: 'video_mode' };

/** A value the client sent as a value: null, "" and blank text count as not sent (seed: "empty means random"). */
function isGiven(value: unknown): boolean {
  if (value === undefined || value === null) return false;
  return typeof value !== 'string' || /\S/.test(value);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Characters of model names a refusal lists; a larger catalog (the kie.ai market, operators' own) is summed up after them. */
const NAMES_SHOWN = 700;

/** `a, b, c` — or the names that fit in NAMES_SHOWN characters and how many more GET /api/v1/models lists. */
function namesText(catalog: Catalog): string {
  const names = modelNames(catalog);
  let used = 0;
  const shownNames = names.filter((n) => (used += n.length + 2) <= NAMES_SHOWN);
  const more = names.length - shownNames.length;
  return more === 0 ? names.join(', ') : `${shownNames.join(', ')} or ${more} more names (GET /api/v1/models lists every model)`;
}

/** Finds a model by id or alias; refuses anything else with the list of names. */
export function findModel(catalog: Catalog, name: unknown): ModelDef {
  if (name === undefined || name === null || name === '') throw Errors.missingField('model', `one of ${namesText(catalog)}`);
  const model = typeof name === 'string' ? catalog.find(name) : undefined;
  if (!model) throw Errors.unsupportedModel(`model must be one of ${namesText(catalog)} (got ${shown(name)})`);
  return model;
}

/** A retired model takes no new tasks (decision 3306): the refusal names it, when and which version. */
export function refuseRetired(model: ModelDef): void {
  if (!model.retired) return;
  const { at, version } = model.retired;
  throw Errors.unsupportedModel(
    `model ${model.id} was retired by the operator on ${new Date(at).toISOString()} (definition version ${version}) and takes no new tasks; its earlier tasks stay readable`,
  );
}

/** One sent value and the key the client used for it (an alias stays visible in messages). */
interface Sent {
  readonly value: unknown;
  readonly as: string;
}

/** `tools: [{type: "web_search"}]` read as web_search: true (an empty list asks for nothing). */
function readTools(value: unknown, where: Where): boolean | undefined {
  const allowed = 'a list of tools like [{"type": "web_search"}]';
  if (!Array.isArray(value)) throw Errors.invalid(`${where.path} must be ${allowed} for ${where.model} (got ${shown(value)})`);
  value.forEach((tool, i) => {
    const at = `${where.path}[${i}]`;
    if (!isPlainObject(tool)) throw Errors.invalid(`${at} must be {"type": "web_search"} for ${where.model} (got ${shown(tool)})`);
    for (const key of Object.keys(tool)) {
      if (key !== 'type') throw Errors.invalid(`${at}.${key} is not a field of a tool for ${where.model}; a tool is {"type": "web_search"}`);
    }
    if (tool.type !== 'web_search') throw Errors.invalid(`${at}.type must be "web_search" for ${where.model} (got ${shown(tool.type)})`);
  });
  return value.length > 0 ? true : undefined;
}

/** Sorts the sent keys into fields; unknown keys are refused by name. `map` is the input mapping of the name the client used. */
function collect(model: ModelDef, input: Record<string, unknown>, name: string, map: InputMap | undefined): Map<string, Sent[]> {
  const sent = new Map<string, Sent[]>();
  const add = (field: string, value: unknown, as: string) => {
    if (!isGiven(value)) return;
    const list = sent.get(field);
    if (list) list.push({ value, as });
    else sent.set(field, [{ value, as }]);
  };
  for (const key of Object.keys(input)) {
    if (map && Object.hasOwn(map, key)) {
      if (!isGiven(input[key])) continue;
      for (const m of mapSent(model, name, map[key]!, key, input[key])) add(m.field, m.value, m.as);
      continue;
    }
    let field = key;
    if (key === 'tools' && model.fields.has('web_search')) field = 'web_search';
    else if (Object.hasOwn(FIELD_ALIASES, key) && model.fields.has(FIELD_ALIASES[key]!)) field = FIELD_ALIASES[key]!;
    else if (!model.fields.has(key)) {
      const hint = Object.hasOwn(model.hints, key) ? ` (${model.hints[key]})` : '';
      const also = map ? `; under ${name} also: ${acceptedNames(map).join(', ')}` : '';
      throw Errors.invalid(`input.${key} is not an input field of ${model.id}${hint}; its fields are: ${[...model.fields.keys()].join(', ')}${also}`);
    }
    add(field, input[key], key);
  }
  return sent;
}

/** Reads one field from what was sent under its name and its alias; the two must agree. */
function readField(model: ModelDef, field: string, given: readonly Sent[], links: LinkOptions): unknown {
  const def = model.fields.get(field)!;
  let result: unknown;
  given.forEach((s, i) => {
    const where: Where = { path: `input.${s.as}`, model: model.id, links };
    const value = s.as === 'tools' ? readTools(s.value, where) : def.read(s.value, where);
    if (i === 0) result = value;
    else if (value !== undefined && result !== undefined && JSON.stringify(value) !== JSON.stringify(result)) {
      throw Errors.invalid(
        `input.${given[0]!.as} and input.${s.as} mean the same for ${model.id} but differ; send one of them (got ${shown(given[0]!.value)} and ${shown(s.value)})`,
      );
    } else result ??= value;
  });
  return result;
}

/**
 * Validates a createTask input against the model's schema and rules. Returns the canonical model
 * id and the normalised input, or throws an AppError whose msg names the field, the allowed values
 * and what was sent. With `media` (facts from uploads) it also checks counts, formats and seconds
 * and plans trims. Never throws anything but AppError.
 */
export function validateInput(catalog: Catalog, modelName: unknown, input: unknown, media?: MediaFacts, options: LinkOptions = {}): ValidatedInput {
  const model = findModel(catalog, modelName);
  refuseRetired(model);
  if (!model.enabled) throw Errors.modelDisabled(model.id);
  if (input === undefined || input === null) throw Errors.missingField('input', `an object of the input fields of ${model.id}`);
  if (!isPlainObject(input)) throw Errors.invalid(`input must be an object of the input fields of ${model.id} (got ${shown(input)})`);
  // Only names with a mapping (kie.ai ids, operator aliases) look one up: one Map read, nothing for other names.
  const map = model.inputMaps.size > 0 ? model.inputMaps.get(modelName as string) : undefined;
  const sent = collect(model, input, String(modelName), map);
  const ctx: RuleContext = {
    model,
    sent: new Set(sent.keys()),
    where: (field) => ({ path: `input.${sent.get(field)?.[0]?.as ?? field}`, model: model.id, links: options }),
  };
  if (model.draft && sent.has('draft_task_id')) {
    const read = (field: string) => readField(model, field, sent.get(field)!, options);
    return { model: model.id, input: readDraftFinal(model, sent, read), draftFinal: true };
  }
  const out: Record<string, unknown> = {};
  for (const [field, def] of model.fields) {
    const given = sent.get(field);
    const value = given ? readField(model, field, given, options) : undefined;
    if (value !== undefined && !(Array.isArray(value) && value.length === 0)) out[field] = value;
    else if (def.default !== undefined) out[field] = def.default;
  }
  for (const rule of model.rules) rule.check(out, ctx);
  return {
    model: model.id,
    input: out,
    draftFinal: false,
    ...(media ? { media: planMedia(model, out, media) } : {}),
  };
}

/** Checks media facts for an already validated input (what validateInput does when given facts). */
export function checkMedia(catalog: Catalog, validated: ValidatedInput, media: MediaFacts): MediaCheck {
  return planMedia(findModel(catalog, validated.model), validated.input, media);
}
