import { readdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { routeName, type Catalog, type ModelDef, type Route } from '../catalog/index.js';
import { ConfigError } from '../config.js';
import type { Files } from '../files/index.js';
import type { Backend } from './types.js';
import type { UpstreamHttp, UpstreamOptions } from './upstream/index.js';
import { createSameApiBackend } from './same-api/index.js';

/** What a factory gets besides the common upstream options: our files, the route as the catalog gives it, its model, and the catalog file's folder. */
export interface KindOptions extends UpstreamOptions {
  readonly files: Files;
  readonly route: Route;
  readonly modelDef: ModelDef;
  /** Folder that relative paths of the route (a comfyui workflow) are read from: the catalog file's folder. */
  readonly baseDir: string;
  /** Where mistakes are reported, e.g. `GENGATE_CATALOG /etc/gengate/catalog.json: models."x".routes[0]`. */
  readonly at: string;
  /** Makes a task due now (the engine polls it at once): for a backend that learns of a job's end on its own (a ComfyUI websocket). */
  readonly due?: (taskId: string) => void;
}

/** How a backend kind is built from a route: its factory and the API base when the route gives none. */
export interface BackendKind {
  readonly create: (opts: KindOptions) => Backend;
  readonly defaultBaseUrl?: string;
  /** True when the kind needs no credential (the operator's own servers); `key_env` is then optional. */
  readonly keyOptional?: boolean;
}

/** Built-in upstream kinds; provider modules add theirs (services.ts passes the full table). */
export const SAME_API_KIND: BackendKind = { create: createSameApiBackend };

/** What building the upstream backends needs. */
export interface RegistryDeps {
  readonly secrets: Readonly<Record<string, string>>;
  readonly http: UpstreamHttp;
  readonly files: Files;
  readonly tmpDir: string;
  readonly kinds: Readonly<Record<string, BackendKind>>;
  /** Folder of the catalog file (relative workflow paths); the working folder when absent. */
  readonly baseDir?: string;
  /** Makes a task due now; handed to every backend (KindOptions.due). */
  readonly due?: (taskId: string) => void;
}

/**
 * One Backend per upstream route of the catalog, keyed by route name (the engine finds a task's
 * backend by the name stored on the task). The credential is read from the setting the route
 * names; a missing one stops the start with a ConfigError naming the model, the route and the setting.
 */
export function buildRouteBackends(catalog: Catalog, deps: RegistryDeps, source = 'catalog'): Map<string, Backend> {
  const out = new Map<string, Backend>();
  for (const model of catalog.models) {
    model.routes.forEach((route, index) => {
      if (route.backend === 'local') return;
      const at = `${source}: models.${JSON.stringify(model.id)}.routes[${index}]`;
      const kind = deps.kinds[route.backend];
      if (!kind)
        throw new ConfigError(
          `${at}.backend: the ${route.backend} backend is not available in this build (available: local, ${Object.keys(deps.kinds).join(', ')})`,
        );
      const apiKey = route.keyEnv ? deps.secrets[route.keyEnv] : undefined;
      if (!apiKey && (route.keyEnv || !kind.keyOptional))
        throw new ConfigError(
          `${at}.key_env: the setting ${route.keyEnv} is not set; put the ${route.backend} credential in the environment variable ${route.keyEnv} (or in the GENGATE_CONFIG file)`,
        );
      const baseUrl = route.baseUrl ?? route.servers?.[0] ?? kind.defaultBaseUrl;
      if (!baseUrl) throw new ConfigError(`${at}.base_url: is required for a ${route.backend} route`);
      const name = routeName(model.id, route, index);
      out.set(
        name,
        kind.create({
          name,
          baseUrl,
          apiKey: apiKey ?? '',
          upstreamModel: route.model ?? model.id,
          http: deps.http,
          tmpDir: deps.tmpDir,
          files: deps.files,
          route,
          modelDef: model,
          baseDir: deps.baseDir ?? process.cwd(),
          at,
          ...(route.map ? { map: route.map } : {}),
          ...(route.uploadUrl ? { uploadUrl: route.uploadUrl } : {}),
          ...(route.minCredit !== undefined ? { minCredit: route.minCredit } : {}),
          ...(route.asIs ? { asIs: true } : {}),
          ...(deps.due ? { due: deps.due } : {}),
        }),
      );
    });
  }
  return out;
}

/** Removes downloads older than `maxAgeMs` left in the upstream scratch folder by a process that died between download and re-hosting. */
export async function sweepUpstreamTmp(dir: string, now: number, maxAgeMs = 3_600_000): Promise<void> {
  const names = await readdir(dir).catch(() => [] as string[]);
  for (const name of names) {
    const file = path.join(dir, name);
    const info = await stat(file).catch(() => null);
    if (info && now - info.mtimeMs > maxAgeMs) await rm(file, { recursive: true, force: true }).catch(() => {});
  }
}
