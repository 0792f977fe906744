import { buildFields, condition, mediaLimits, type Fail } from './compile-fields.js';
import { compilePrice } from './compile-price.js';
import type { Definition, RuleSpec } from './format.js';
import { parseInputMap, withAlias } from './mapping.js';
import { NAMED_RULES } from './named-rules.js';
import { checkOpenAi, compileForm } from './compile-extras.js';
import { BACKEND_KINDS, parseRoutes } from './routes.js';
import { checkLimitFields, parseKindLimits } from './route-limits.js';
import { audioNeedsPicture, draftForcesResolution, excludes, needs, onlyWhen, required, requires } from './rules.js';
import type { DemoRecipe, DemoRole, DraftRules, FieldDef, ModelDef, Rule } from './types.js';

/**
 * One path for every model (docs/decisions/3300): a checked definition → the runtime ModelDef that
 * validation, pricing, `/models`, the calculator, OpenAPI, MCP and docs/models.md read. Every
 * reference (a rule's fields, a price's tiers, an alias's targets, a draft's resolutions) is
 * checked here; `fail(where, why)` names the place as a dotted path the loader turns into a line.
 */

export type { Fail } from './compile-fields.js';

function dataRule(spec: RuleSpec, fields: ReadonlyMap<string, FieldDef>, at: string, fail: Fail): Rule {
  const known = (list: readonly string[], where: string) => {
    const bad = list.find((f) => !fields.has(f));
    if (bad !== undefined) throw fail(where, `${bad} is not an input field; fields: ${[...fields.keys()].join(', ')}`);
    return list;
  };
  if ('named' in spec) {
    const named = NAMED_RULES.get(spec.named);
    if (!named) throw fail(`${at}.named`, `unknown named rule ${JSON.stringify(spec.named)}; named rules: ${[...NAMED_RULES.keys()].join(', ')}`);
    known(named.fields, `${at}.named`);
    return named;
  }
  if ('required' in spec) {
    known([spec.required], `${at}.required`);
    return required(spec.required, {
      ...(spec.unless_given ? { unless: known(spec.unless_given, `${at}.unless_given`) } : {}),
      ...(spec.when ? { when: condition(spec.when, fields, `${at}.when`, fail) } : {}),
      ...(spec.because ? { because: spec.because } : {}),
      ...(spec.note ? { note: spec.note } : {}),
    });
  }
  if ('requires' in spec) {
    known([spec.field, ...spec.requires], at);
    return requires(spec.field, spec.requires, { ...(spec.got ? { got: spec.got } : {}), ...(spec.note ? { note: spec.note } : {}) });
  }
  if ('excludes' in spec) {
    known([spec.field], `${at}.field`);
    const others = Array.isArray(spec.excludes) ? known(spec.excludes, `${at}.excludes`) : condition(spec.excludes, fields, `${at}.excludes`, fail);
    return excludes(spec.field, others, spec.note);
  }
  if ('only_when' in spec) {
    known(spec.fields, `${at}.fields`);
    return onlyWhen(spec.fields, condition(spec.only_when, fields, `${at}.only_when`, fail), spec.note);
  }
  known([spec.field], `${at}.field`);
  const table: Record<string, { oneOf: readonly string[]; noun: string }> = {};
  for (const [value, need] of Object.entries(spec.needs)) {
    const [[, [normal]]] = condition({ [spec.field]: value }, fields, `${at}.needs`, fail) as [readonly [string, readonly unknown[]]];
    table[String(normal)] = { oneOf: known(need.one_of, `${at}.needs.${value}.one_of`), noun: need.noun };
  }
  return needs(spec.field, table, spec.note);
}

/** Rules in this order: required fields (field order), the definition's rules, then the ones media and the draft flow imply. */
function compileRules(def: Definition, fields: ReadonlyMap<string, FieldDef>, model: Pick<ModelDef, 'media' | 'draft'>, fail: Fail): Rule[] {
  const rules: Rule[] = Object.entries(def.inputs)
    .filter(([, s]) => s.required)
    .map(([name]) => required(name, {}));
  (def.rules ?? []).forEach((spec, i) => rules.push(dataRule(spec, fields, `rules[${i}]`, fail)));
  if (model.media.audios && !model.media.audios.alone) rules.push(audioNeedsPicture);
  if (model.draft) rules.push(draftForcesResolution);
  return rules;
}

function compileDraft(def: Definition, fail: Fail): DraftRules | undefined {
  const d = def.draft;
  if (!d) return undefined;
  if (def.inputs.draft?.type !== 'boolean' || def.inputs.draft_task_id?.type !== 'task') {
    throw fail('draft', 'the draft flow needs inputs draft (boolean) and draft_task_id (task)');
  }
  const resolution = def.inputs.resolution;
  const values = resolution?.type === 'choice' ? resolution.values : [];
  for (const key of ['resolution', 'final_resolution'] as const) {
    if (!values.includes(d[key])) throw fail(`draft.${key}`, `must be a value of inputs.resolution (got ${JSON.stringify(d[key])})`);
  }
  if (def.price.by !== 'resolution') throw fail('price.by', 'a model with a draft flow is priced by resolution (drafts are billed at the draft resolution)');
  const bad = d.final_may_change.find((f) => !def.inputs[f] || f === 'draft_task_id');
  if (bad !== undefined) throw fail('draft.final_may_change', `${bad} is not an input field a final may change`);
  return { resolution: d.resolution, finalResolution: d.final_resolution, keepDays: d.keep_days, finalMayChange: d.final_may_change };
}

/** The field each demo role reads when the definition names none. */
export const DEMO_DEFAULTS: Readonly<Record<DemoRole, string>> = {
  prompt: 'prompt',
  seconds: 'duration',
  size: 'resolution',
  aspect: 'aspect_ratio',
  format: 'output_format',
  sound: 'generate_audio',
  lastFrame: 'return_last_frame',
};

/** The demo recipe: the definition's fields by role, else the default field when the model has it. */
function demoRecipe(def: Definition, fields: ReadonlyMap<string, FieldDef>, fail: Fail): DemoRecipe {
  const given: Partial<Record<DemoRole, string>> = { ...def.demo, lastFrame: def.demo?.last_frame };
  delete (given as Record<string, unknown>).last_frame;
  const out: Partial<Record<DemoRole, string>> = {};
  for (const role of Object.keys(DEMO_DEFAULTS) as DemoRole[]) {
    const field = given[role];
    if (field !== undefined && !fields.has(field)) throw fail(`demo.${role === 'lastFrame' ? 'last_frame' : role}`, `${field} is not an input field`);
    const chosen = field ?? (fields.has(DEMO_DEFAULTS[role]) ? DEMO_DEFAULTS[role] : undefined);
    if (chosen !== undefined) out[role] = chosen;
  }
  return out;
}

/** Aliases: plain names, or names with an input mapping (kie.ai ids and operators' own, decision 0400). */
function addAliases(model: ModelDef, def: Definition, fail: Fail): ModelDef {
  let out = model;
  (def.aliases ?? []).forEach((alias, i) => {
    const at = `aliases[${i}]`;
    const name = typeof alias === 'string' ? alias : alias.name;
    const input = typeof alias === 'string' ? undefined : alias.input;
    if (name === def.id && input === undefined) throw fail(at, 'the id itself is an alias only with an input mapping');
    if (name !== def.id && out.aliases.includes(name)) throw fail(at, `${name} is listed twice`);
    if (typeof alias !== 'string' && alias.upstream_values) {
      for (const field of Object.keys(alias.upstream_values))
        if (!model.fields.has(field)) throw fail(`${at}.upstream_values.${field}`, `${field} is not an input field`);
    }
    out = withAlias(out, name, input === undefined ? undefined : parseInputMap(out, input, `${at}.input`, fail));
  });
  return out;
}

/** Compiles a definition that passed the format's schema; throws `fail(where, why)` at the first problem. */
export function compileDefinition(def: Definition, fail: Fail, source?: string): ModelDef {
  const fields = buildFields(def, fail);
  const media = mediaLimits(def, fail);
  const draft = compileDraft(def, fail);
  const price = compilePrice(def, fail);
  const duration = def.inputs.duration;
  const auto = price.unit === 'second' && duration?.type === 'integer' && duration.auto ? (def.price.auto_length ?? duration.max) : undefined;
  const hints = def.hints ?? {};
  for (const name of Object.keys(hints))
    if (fields.has(name)) throw fail(`hints.${name}`, `${name} is an input field; hints are for names a client might send by mistake`);
  const model: ModelDef = {
    id: def.id,
    aliases: [],
    inputMaps: new Map(),
    kind: def.kind,
    title: def.title,
    summary: def.description,
    fields,
    rules: [],
    media,
    price,
    ...(auto !== undefined ? { autoLengthSeconds: auto } : {}),
    ...(draft ? { draft } : {}),
    hints,
    enabled: def.enabled ?? true,
    routes: [{ backend: 'local' }],
    form: compileForm(def, fields, fail),
    demo: demoRecipe(def, fields, fail),
    ...(def.openai ? { openai: checkOpenAi(def.openai, fields, fail) } : {}),
    ...(source ? { source } : {}),
  };
  const withRules: ModelDef = { ...model, rules: compileRules(def, fields, model, fail) };
  // Routes last: the route parser checks a route's input limits against the model's fields (issue 36).
  const routed: ModelDef = def.routes ? { ...withRules, routes: parseRoutes(def.routes, 'routes', fail) } : withRules;
  const limited: ModelDef = def.route_limits ? { ...routed, routeLimits: parseKindLimits(def.route_limits, 'route_limits', fail, BACKEND_KINDS) } : routed;
  checkLimitFields(limited, '', fail);
  return addAliases(limited, def, fail);
}
