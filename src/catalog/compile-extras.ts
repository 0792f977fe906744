import { condition, type Fail } from './compile-fields.js';
import type { Definition } from './format.js';
import type { FieldDef, FieldForm, FormHints, OpenAiMaps, OpenAiRule } from './types.js';

/** The parts of a definition that no check at createTask reads: form hints and the OpenAI input map, checked all the same. */

/** Form hints: groups in order, each field's label, help, group, advanced flag and visible-when (values normalised). */
export function compileForm(def: Definition, fields: ReadonlyMap<string, FieldDef>, fail: Fail): FormHints {
  const groups = (def.form?.groups ?? []).map((g) => ({ id: g.id, label: g.label, advanced: g.advanced ?? false }));
  const ids = new Set<string>();
  groups.forEach((g, i) => {
    if (ids.has(g.id)) throw fail(`form.groups[${i}].id`, `group ${g.id} is listed twice`);
    ids.add(g.id);
  });
  const out = new Map<string, FieldForm>();
  for (const [name, spec] of Object.entries(def.inputs)) {
    const at = `inputs.${name}`;
    if (spec.group !== undefined && !ids.has(spec.group))
      throw fail(`${at}.group`, `unknown group ${JSON.stringify(spec.group)}; groups of form.groups: ${[...ids].join(', ') || 'none'}`);
    if (spec.visible_when && Object.hasOwn(spec.visible_when, name)) throw fail(`${at}.visible_when`, 'a field cannot depend on itself');
    const visibleWhen = spec.visible_when
      ? Object.fromEntries(condition(spec.visible_when, fields, `${at}.visible_when`, fail).map(([f, values]) => [f, values]))
      : undefined;
    const form: FieldForm = {
      ...(spec.label !== undefined ? { label: spec.label } : {}),
      ...(spec.help !== undefined ? { help: spec.help } : {}),
      ...(spec.group !== undefined ? { group: spec.group } : {}),
      ...(spec.advanced !== undefined ? { advanced: spec.advanced } : {}),
      ...(visibleWhen ? { visibleWhen } : {}),
    };
    if (Object.keys(form).length > 0) out.set(name, form);
  }
  return { groups, fields: out };
}

/** A value an OpenAI parameter sets must be one the target field accepts (read through it, so it is normalised). */
function readAs(fields: ReadonlyMap<string, FieldDef>, field: string, value: unknown, at: string, fail: Fail): unknown {
  const def = fields.get(field);
  if (!def) throw fail(at, `${field} is not an input field; fields: ${[...fields.keys()].join(', ')}`);
  try {
    return def.read(value, { path: `input.${field}`, model: 'this model' });
  } catch (e) {
    throw fail(at, (e as Error).message);
  }
}

function checkRule(rule: OpenAiRule, fields: ReadonlyMap<string, FieldDef>, at: string, fail: Fail): OpenAiRule {
  if (typeof rule === 'string') {
    if (!fields.has(rule)) throw fail(at, `${rule} is not an input field; fields: ${[...fields.keys()].join(', ')}`);
    return rule;
  }
  if ('to' in rule) {
    const values = rule.values
      ? Object.fromEntries(Object.entries(rule.values).map(([k, v]) => [k, readAs(fields, rule.to, v, `${at}.values.${k}`, fail)]))
      : undefined;
    if (!fields.has(rule.to)) throw fail(`${at}.to`, `${rule.to} is not an input field`);
    return values ? { to: rule.to, values } : { to: rule.to };
  }
  if ('set' in rule) {
    const set = Object.fromEntries(
      Object.entries(rule.set).map(([value, sets]) => [
        value,
        Object.fromEntries(Object.entries(sets).map(([f, v]) => [f, readAs(fields, f, v, `${at}.set.${value}.${f}`, fail)])),
      ]),
    );
    return { set };
  }
  if ('instead' in rule && !fields.has(rule.instead)) throw fail(`${at}.instead`, `${rule.instead} is not an input field`);
  return rule;
}

/** The OpenAI input maps with every target field checked and every value normalised by its field. */
export function checkOpenAi(maps: NonNullable<Definition['openai']>, fields: ReadonlyMap<string, FieldDef>, fail: Fail): OpenAiMaps {
  const out: Record<string, Record<string, OpenAiRule>> = {};
  for (const [family, map] of Object.entries(maps)) {
    if (!map) continue;
    out[family] = Object.fromEntries(
      Object.entries(map).map(([param, rule]) => [param, checkRule(rule as OpenAiRule, fields, `openai.${family}.${param}`, fail)]),
    );
  }
  return out;
}
