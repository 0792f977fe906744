import { CREDENTIAL_SETTING, type ConfigError } from '../config.js';
import { parseRouteLimits } from './route-limits.js';
import type { Catalog, Route } from './types.js';

/** Backends a route may name (DECISIONS §16): the built-in renderer and the upstream adapters. */
export const BACKEND_KINDS: readonly string[] = ['local', 'same-api', 'byteplus', 'fal', 'replicate', 'kie', 'comfyui'];

/** Fields a route of the catalog file may have, by kind (local takes nothing else: it runs in-process). */
const UPSTREAM_FIELDS = ['backend', 'name', 'model', 'base_url', 'key_env', 'map', 'concurrency', 'as_is', 'optional', 'private_network', 'limits'];
/** Kinds whose adapter can send the input under the model's own names (`as_is`): the ones `gengate models import` drafts for. */
const AS_IS_KINDS = ['fal', 'replicate', 'kie'];
/** Fields only a kie route has: kie.ai's upload host, and the credit below which the route is skipped. */
const KIE_FIELDS = ['upload_url', 'min_credit'];
/** Kinds whose route may be `optional`: left out when its credential setting is not set (the shipped kie.ai market, decision 3311). */
const OPTIONAL_KINDS = ['kie', 'fal', 'replicate'];
/** Kinds whose `model` may be left out: same-api (our model id) and kie (the kie.ai id from the shared table, src/catalog/kie.ts). */
const MODEL_OPTIONAL = ['same-api', 'kie'];
/** A comfyui route: the operator's own ComfyUI servers and the workflow file the model runs (docs/backends.md "ComfyUI"). */
const COMFYUI_FIELDS = ['backend', 'name', 'servers', 'workflow', 'fps', 'key_env', 'concurrency', 'private_network', 'limits'];
const MAX_SERVERS = 32;
/** Setting names a credential may live in: ending in _KEY, _TOKEN or _SECRET, so only those are read from the environment. */
export const KEY_ENV = CREDENTIAL_SETTING;
const NAME = /^[A-Za-z0-9][A-Za-z0-9._:#/-]{0,99}$/;
const MAX_MAP_KEYS = 100;

type Fail = (where: string, why: string) => ConfigError;
type Json = Record<string, unknown>;

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The name of a route: its own `name`, else `local` for the shared local backend, else `<kind>:<model>#<position>`. */
export function routeName(modelId: string, route: Route, index: number): string {
  if (route.name) return route.name;
  return route.backend === 'local' ? 'local' : `${route.backend}:${modelId}#${index + 1}`;
}

/** The hosts of every route marked `private_network` (its `base_url`, `upload_url` and `servers`): trusted on private addresses (decision 2502). */
export function privateRouteHosts(catalog: Pick<Catalog, 'models'>): string[] {
  const hosts = new Set<string>();
  for (const model of catalog.models)
    for (const route of model.routes) {
      if (!route.privateNetwork) continue;
      for (const url of [route.baseUrl, route.uploadUrl, ...(route.servers ?? [])]) if (url) hosts.add(new URL(url).hostname.replace(/^\[|\]$/g, ''));
    }
  return [...hosts];
}

/** Parses the `routes` list of one model in the catalog file; throws ConfigError naming the exact field. */
export function parseRoutes(given: unknown, at: string, fail: Fail): Route[] {
  if (!Array.isArray(given) || given.length === 0) {
    throw fail(at, 'must be a non-empty list like [{"backend": "local"}] or [{"backend": "fal", "model": "...", "key_env": "FAL_KEY"}, {"backend": "local"}]');
  }
  if (given.length > 10) throw fail(at, `may have at most 10 routes (got ${given.length})`);
  return given.map((r, i) => parseRoute(r, `${at}[${i}]`, fail));
}

function parseRoute(r: unknown, at: string, fail: Fail): Route {
  if (!isObject(r) || typeof r.backend !== 'string' || !BACKEND_KINDS.includes(r.backend)) {
    throw fail(`${at}.backend`, `must be one of ${BACKEND_KINDS.join(', ')} (got ${JSON.stringify(isObject(r) ? r.backend : r)})`);
  }
  const kind = r.backend;
  if (kind === 'local') {
    const extra = Object.keys(r).find((k) => k !== 'backend');
    if (extra) throw fail(`${at}.${extra}`, 'unknown field; a local route has only "backend"');
    return { backend: 'local' };
  }
  if (kind === 'comfyui') return parseComfyRoute(r, at, fail);
  const fields = kind === 'kie' ? [...UPSTREAM_FIELDS, ...KIE_FIELDS] : UPSTREAM_FIELDS;
  const extra = Object.keys(r).find((k) => !fields.includes(k));
  if (extra) throw fail(`${at}.${extra}`, `unknown field; a ${kind} route has ${fields.join(', ')}`);
  const route: Mutable<Route> = { backend: kind };
  parseCommon(r, route, at, fail);
  if (r.model !== undefined) {
    if (typeof r.model !== 'string' || r.model.length === 0 || r.model.length > 300) {
      throw fail(`${at}.model`, `must be the upstream's model id, 1 to 300 characters (got ${JSON.stringify(r.model)})`);
    }
    route.model = r.model;
  } else if (!MODEL_OPTIONAL.includes(kind)) {
    throw fail(`${at}.model`, `is required for a ${kind} route: the ${kind} model id (see docs/backends.md)`);
  }
  if (r.base_url !== undefined) {
    if (typeof r.base_url !== 'string' || !isHttpUrl(r.base_url)) {
      throw fail(`${at}.base_url`, `must be an http:// or https:// URL without user:password (got ${JSON.stringify(r.base_url)})`);
    }
    route.baseUrl = r.base_url.replace(/\/+$/, '');
  } else if (kind === 'same-api') {
    throw fail(`${at}.base_url`, 'is required for a same-api route: the upstream service address, e.g. "https://upstream.example.com"');
  }
  if (typeof r.key_env !== 'string' || !KEY_ENV.test(r.key_env)) {
    throw fail(
      `${at}.key_env`,
      `must name the setting holding the credential, capital letters, digits and _ ending in _KEY, _TOKEN or _SECRET, e.g. "FAL_KEY" (got ${JSON.stringify(r.key_env)}); the catalog file never holds the credential itself`,
    );
  }
  route.keyEnv = r.key_env;
  if (r.map !== undefined) route.map = parseMap(r.map, `${at}.map`, fail);
  if (r.as_is !== undefined) {
    if (!AS_IS_KINDS.includes(kind)) throw fail(`${at}.as_is`, `is for ${AS_IS_KINDS.join(', ')} routes (a ${kind} route maps GenGate's names)`);
    if (typeof r.as_is !== 'boolean')
      throw fail(`${at}.as_is`, `must be true (send the input under the model's own names) or false (got ${JSON.stringify(r.as_is)})`);
    if (r.as_is) route.asIs = true;
  }
  if (r.optional !== undefined) {
    if (!OPTIONAL_KINDS.includes(kind)) throw fail(`${at}.optional`, `is for ${OPTIONAL_KINDS.join(', ')} routes`);
    if (typeof r.optional !== 'boolean')
      throw fail(`${at}.optional`, `must be true (leave the route out while ${String(r.key_env)} is not set) or false (got ${JSON.stringify(r.optional)})`);
    if (r.optional) route.optional = true;
  }
  if (r.upload_url !== undefined) {
    if (typeof r.upload_url !== 'string' || !isHttpUrl(r.upload_url)) {
      throw fail(`${at}.upload_url`, `must be an http:// or https:// URL without user:password (got ${JSON.stringify(r.upload_url)})`);
    }
    route.uploadUrl = r.upload_url.replace(/\/+$/, '');
  }
  if (r.min_credit !== undefined) {
    if (typeof r.min_credit !== 'number' || !Number.isFinite(r.min_credit) || r.min_credit < 0 || r.min_credit > 1e12) {
      throw fail(`${at}.min_credit`, `must be a number of kie.ai credits, 0 or more (got ${JSON.stringify(r.min_credit)})`);
    }
    route.minCredit = r.min_credit;
  }
  return route;
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** `name`, `concurrency` and `private_network`, which every remote route may have. */
function parseCommon(r: Json, route: Mutable<Route>, at: string, fail: Fail): void {
  if (r.name !== undefined) {
    if (typeof r.name !== 'string' || !NAME.test(r.name) || r.name === 'local') {
      throw fail(`${at}.name`, `must be a name of letters, digits and . _ : # / - other than "local" (got ${JSON.stringify(r.name)})`);
    }
    route.name = r.name;
  }
  if (r.concurrency !== undefined) {
    if (typeof r.concurrency !== 'number' || !Number.isInteger(r.concurrency) || r.concurrency < 1 || r.concurrency > 100_000) {
      throw fail(`${at}.concurrency`, `must be a whole number from 1 to 100000 (got ${JSON.stringify(r.concurrency)})`);
    }
    route.concurrency = r.concurrency;
  }
  if (r.private_network !== undefined) {
    if (typeof r.private_network !== 'boolean')
      throw fail(
        `${at}.private_network`,
        `must be true (this route's own hosts may be on loopback or private addresses; customers' links stay guarded) or false (got ${JSON.stringify(r.private_network)})`,
      );
    if (r.private_network) route.privateNetwork = true;
  }
  if (r.limits !== undefined) route.limits = parseRouteLimits(r.limits, `${at}.limits`, fail);
}

/**
 * A comfyui route: `servers` (one or more ComfyUI base URLs), `workflow` (a workflow file in ComfyUI's API
 * format, relative to the catalog file), optional `fps`, `key_env` (a token for a proxy in front of
 * ComfyUI), `name` and `concurrency`. The workflow's contents are checked when the engine builds the route.
 */
function parseComfyRoute(r: Json, at: string, fail: Fail): Route {
  const extra = Object.keys(r).find((k) => !COMFYUI_FIELDS.includes(k));
  if (extra) throw fail(`${at}.${extra}`, `unknown field; a comfyui route has ${COMFYUI_FIELDS.join(', ')}`);
  const route: Mutable<Route> = { backend: 'comfyui' };
  parseCommon(r, route, at, fail);
  const servers = r.servers;
  if (!Array.isArray(servers) || servers.length === 0 || servers.length > MAX_SERVERS) {
    throw fail(
      `${at}.servers`,
      `must be a list of 1 to ${MAX_SERVERS} ComfyUI addresses, e.g. ["http://gpu-1:8188", "http://gpu-2:8188"] (got ${JSON.stringify(servers)})`,
    );
  }
  route.servers = servers.map((u, i) => {
    if (typeof u !== 'string' || !isHttpUrl(u))
      throw fail(`${at}.servers[${i}]`, `must be an http:// or https:// URL without user:password (got ${JSON.stringify(u)})`);
    return u.replace(/\/+$/, '');
  });
  const dup = route.servers.find((u, i) => route.servers!.indexOf(u) !== i);
  if (dup) throw fail(`${at}.servers`, `lists ${dup} twice`);
  if (typeof r.workflow !== 'string' || !/\.json$/i.test(r.workflow) || r.workflow.length > 500) {
    throw fail(
      `${at}.workflow`,
      `must be the path of a workflow file in ComfyUI's API format ending in .json, relative to the catalog file (got ${JSON.stringify(r.workflow)})`,
    );
  }
  route.workflow = r.workflow;
  if (r.fps !== undefined) {
    if (typeof r.fps !== 'number' || !Number.isInteger(r.fps) || r.fps < 1 || r.fps > 120) {
      throw fail(`${at}.fps`, `must be a whole number of frames per second from 1 to 120 (got ${JSON.stringify(r.fps)})`);
    }
    route.fps = r.fps;
  }
  if (r.key_env !== undefined) {
    if (typeof r.key_env !== 'string' || !KEY_ENV.test(r.key_env)) {
      throw fail(
        `${at}.key_env`,
        `must name the setting holding the token of the proxy in front of ComfyUI, capital letters, digits and _ ending in _KEY, _TOKEN or _SECRET (got ${JSON.stringify(r.key_env)})`,
      );
    }
    route.keyEnv = r.key_env;
  }
  return route;
}

/** A route's input mapping: `rename` (field → field), `set` (field → constant), `omit` (fields); see docs/backends.md. */
function parseMap(map: unknown, at: string, fail: Fail): Json {
  if (!isObject(map)) throw fail(at, `must be an object with "rename", "set" and/or "omit" (got ${JSON.stringify(map)})`);
  for (const [key, v] of Object.entries(map)) {
    const size = isObject(v) ? Object.keys(v).length : Array.isArray(v) ? v.length : 0;
    if (size > MAX_MAP_KEYS) throw fail(`${at}.${key}`, `may name at most ${MAX_MAP_KEYS} fields (got ${size})`);
    if (key === 'rename') {
      if (!isObject(v) || !Object.values(v).every((x) => typeof x === 'string' && x.length > 0)) {
        throw fail(`${at}.rename`, `must be an object of field names to new field names, e.g. {"duration": "seconds"} (got ${JSON.stringify(v)})`);
      }
    } else if (key === 'set') {
      if (!isObject(v)) throw fail(`${at}.set`, `must be an object of fields to constant values, e.g. {"watermark": false} (got ${JSON.stringify(v)})`);
    } else if (key === 'omit') {
      if (!Array.isArray(v) || !v.every((x) => typeof x === 'string')) throw fail(`${at}.omit`, `must be a list of field names (got ${JSON.stringify(v)})`);
    } else {
      throw fail(`${at}.${key}`, 'unknown field; a map has "rename", "set" and "omit"');
    }
  }
  return map;
}

function isHttpUrl(u: string): boolean {
  try {
    const url = new URL(u);
    return (url.protocol === 'http:' || url.protocol === 'https:') && !url.username && !url.password;
  } catch {
    return false;
  }
}

/**
 * The models with each `optional` route left out while the setting its `key_env` names is not set
 * (decision 3311): a shipped kie.ai market model goes to kie.ai once KIE_API_KEY is set, and to the
 * routes after it (the local demo backend) otherwise. A model keeps at least the local route.
 */
export function configuredRoutes<M extends { routes: readonly Route[] }>(models: readonly M[], secrets: Readonly<Record<string, string>>): M[] {
  return models.map((m) => {
    if (!m.routes.some((r) => r.optional)) return m;
    const routes = m.routes.filter((r) => !r.optional || (r.keyEnv !== undefined && Boolean(secrets[r.keyEnv])));
    return { ...m, routes: routes.length > 0 ? routes : [{ backend: 'local' }] };
  });
}

/** Refuses two routes with the same name anywhere in the catalog (they would share a breaker and a counter). */
export function checkRouteNames(models: readonly { id: string; routes: readonly Route[] }[], fail: Fail): void {
  const seen = new Map<string, string>();
  for (const m of models) {
    m.routes.forEach((r, i) => {
      if (r.backend === 'local') return;
      const name = routeName(m.id, r, i);
      const other = seen.get(name);
      if (other) throw fail(`models.${JSON.stringify(m.id)}.routes[${i}].name`, `route name ${JSON.stringify(name)} is already used by ${other}`);
      seen.set(name, `models.${JSON.stringify(m.id)}.routes[${i}]`);
    });
  }
}
