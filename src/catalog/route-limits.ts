import type { ConfigError } from '../config.js';
import type { ModelDef, Route, RouteLimit } from './types.js';

/**
 * Per-route input limits (issue 36 item 4, decision 2503): what an upstream refuses although the
 * model accepts it (kie.ai's Suno API: a prompt of at most 500 characters without custom mode, a
 * style required in custom mode). Declared on a route (`limits`) or, for every route of a backend
 * kind, in the model definition (`route_limits: {kie: [...]}`); checked at createTask before any
 * charge, against every route the task may reach, so a task is never charged for an input its
 * upstream refuses.
 */

type Fail = (where: string, why: string) => ConfigError;
type Json = Record<string, unknown>;
const LIMIT_FIELDS = ['when', 'max_length', 'required', 'upstream'];
const SCALAR = (v: unknown) => typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Parses a list of limits (a route's `limits`, or one kind's list of `route_limits`); throws `fail` naming the exact field. */
export function parseRouteLimits(given: unknown, at: string, fail: Fail): RouteLimit[] {
  if (!Array.isArray(given) || given.length === 0 || given.length > 50)
    throw fail(at, `must be a list of 1 to 50 limits like {"when": {"custom_mode": false}, "max_length": {"prompt": 500}} (got ${JSON.stringify(given)})`);
  return given.map((l, i) => {
    const where = `${at}[${i}]`;
    if (!isObject(l)) throw fail(where, `must be an object with ${LIMIT_FIELDS.join(', ')} (got ${JSON.stringify(l)})`);
    const extra = Object.keys(l).find((k) => !LIMIT_FIELDS.includes(k));
    if (extra) throw fail(`${where}.${extra}`, `unknown field; a limit has ${LIMIT_FIELDS.join(', ')}`);
    const out: { when?: Record<string, readonly unknown[]>; maxLength?: Record<string, number>; required?: string[]; upstream?: string } = {};
    if (l.when !== undefined) {
      if (!isObject(l.when) || Object.keys(l.when).length === 0) throw fail(`${where}.when`, 'must be an object of field → value (or list of values)');
      out.when = {};
      for (const [f, v] of Object.entries(l.when)) {
        const values = Array.isArray(v) ? v : [v];
        if (values.length === 0 || !values.every(SCALAR)) throw fail(`${where}.when.${f}`, `must be a value or a list of values (got ${JSON.stringify(v)})`);
        out.when[f] = values;
      }
    }
    if (l.max_length !== undefined) {
      if (!isObject(l.max_length) || Object.keys(l.max_length).length === 0) throw fail(`${where}.max_length`, 'must be an object of field → most characters');
      for (const [f, n] of Object.entries(l.max_length))
        if (typeof n !== 'number' || !Number.isInteger(n) || n < 0 || n > 10_000_000)
          throw fail(`${where}.max_length.${f}`, `must be a whole number of characters (got ${JSON.stringify(n)})`);
      out.maxLength = l.max_length as Record<string, number>;
    }
    if (l.required !== undefined) {
      if (!Array.isArray(l.required) || l.required.length === 0 || !l.required.every((f) => typeof f === 'string'))
        throw fail(`${where}.required`, `must be a list of field names (got ${JSON.stringify(l.required)})`);
      out.required = l.required as string[];
    }
    if (!out.maxLength && !out.required) throw fail(where, 'must say max_length or required');
    if (l.upstream !== undefined) {
      if (typeof l.upstream !== 'string' || l.upstream.length === 0 || l.upstream.length > 100)
        throw fail(`${where}.upstream`, `must be the upstream's name as the refusal shows it, 1 to 100 characters (got ${JSON.stringify(l.upstream)})`);
      out.upstream = l.upstream;
    }
    return out;
  });
}

/** Parses a definition's `route_limits` (backend kind → limits). */
export function parseKindLimits(given: unknown, at: string, fail: Fail, kinds: readonly string[]): Record<string, RouteLimit[]> {
  if (!isObject(given)) throw fail(at, 'must be an object of backend kind → list of limits');
  const out: Record<string, RouteLimit[]> = {};
  for (const [kind, list] of Object.entries(given)) {
    if (!kinds.includes(kind) || kind === 'local')
      throw fail(`${at}.${kind}`, `must be an upstream backend kind: ${kinds.filter((k) => k !== 'local').join(', ')}`);
    out[kind] = parseRouteLimits(list, `${at}.${kind}`, fail);
  }
  return out;
}

/** Every field a model's limits name must be one of its inputs. */
export function checkLimitFields(model: ModelDef, at: string, fail: Fail): void {
  const lists: [string, readonly RouteLimit[]][] = [
    ...Object.entries(model.routeLimits ?? {}).map(([k, l]) => [`route_limits.${k}`, l] as [string, readonly RouteLimit[]]),
    ...model.routes.map((r, i) => [`routes[${i}].limits`, r.limits ?? []] as [string, readonly RouteLimit[]]),
  ];
  for (const [where, list] of lists)
    list.forEach((l, i) => {
      for (const f of [...Object.keys(l.when ?? {}), ...Object.keys(l.maxLength ?? {}), ...(l.required ?? [])])
        if (!model.fields.has(f)) throw fail(`${at}${where}[${i}]`, `${f} is not an input field of ${model.id}`);
    });
}

/** The limits that apply to one route of the model: its own `limits`, else the definition's for its kind. */
export function routeLimitsOf(model: ModelDef, route: Route): readonly RouteLimit[] {
  return route.limits ?? model.routeLimits?.[route.backend] ?? [];
}

const same = (a: unknown, b: unknown) => (typeof a === 'string' && typeof b === 'string' ? a.toLowerCase() === b.toLowerCase() : a === b);

/** The refusal for an input one of the model's routes would refuse (the first found), or null. `input` is validated (defaults filled). */
export function routeLimitRefusal(model: ModelDef, input: Readonly<Record<string, unknown>>): string | null {
  for (const route of model.routes) {
    for (const limit of routeLimitsOf(model, route)) {
      const when = Object.entries(limit.when ?? {});
      if (!when.every(([f, values]) => values.some((v) => same(v, input[f])))) continue;
      const upstream = limit.upstream ?? `the ${route.backend} upstream`;
      const cond = when.length ? ` when ${when.map(([f, v]) => `input.${f} is ${v.map((x) => JSON.stringify(x)).join(' or ')}`).join(' and ')}` : '';
      for (const f of limit.required ?? [])
        if (input[f] === undefined || input[f] === null || input[f] === '')
          return `input.${f} is required${cond}: ${upstream} that ${model.id} runs on requires it`;
      for (const [f, max] of Object.entries(limit.maxLength ?? {})) {
        const v = input[f];
        if (typeof v === 'string' && [...v].length > max)
          return `input.${f} may be at most ${max} characters${cond}: ${upstream} that ${model.id} runs on takes no more (got ${[...v].length})`;
      }
    }
  }
  return null;
}
