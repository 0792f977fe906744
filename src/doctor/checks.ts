import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import path from 'node:path';
import { sql } from 'kysely';
import type { Config } from '../config.js';
import type { Catalog } from '../catalog/index.js';
import { MIGRATIONS, type Database } from '../store/index.js';

/** One line of `gengate doctor`: what was checked, how it went, and what to do about it. */
export interface Check {
  name: string;
  status: 'ok' | 'warn' | 'fail' | 'skip';
  detail: string;
  fix?: string;
}

/** Clocks further apart than this are worth fixing (leases on SQLite, expiry times, signatures' timestamps). */
export const SKEW_WARN_MS = 2_000;

/** The database answers, and which migrations it has against the ones this release knows. */
export async function checkDatabase(database: Database): Promise<Check[]> {
  await sql`select 1`.execute(database.db);
  const out: Check[] = [{ name: 'database', status: 'ok', detail: `${database.dialect} answers` }];
  const table = await sql<{ n: number }>`select count(*) as n from gengate_migrations`.execute(database.db).catch(() => null);
  const done = table ? (await database.db.selectFrom('gengate_migrations').select('version').execute()).map((r) => Number(r.version)) : [];
  const known = MIGRATIONS.map((m) => m.version);
  const pending = known.filter((v) => !done.includes(v));
  const newer = done.filter((v) => !known.includes(v));
  if (newer.length > 0) {
    out.push({
      name: 'migrations',
      status: 'fail',
      detail: `the database has migrations this release does not know (${newer.join(', ')})`,
      fix: 'run the newer GenGate release that made them (decision 2601: never go back a release)',
    });
  } else if (pending.length > 0) {
    out.push({
      name: 'migrations',
      status: 'warn',
      detail: `${pending.length} not applied yet (${pending.join(', ')})`,
      fix: 'run `gengate migrate` (or start one process: it migrates)',
    });
  } else out.push({ name: 'migrations', status: 'ok', detail: `all ${known.length} applied` });
  return out;
}

/** How far the database's clock is from this machine's (PostgreSQL; SQLite has no clock of its own). */
export async function databaseSkew(database: Database): Promise<number | null> {
  if (database.dialect !== 'postgres') return null;
  const before = Date.now();
  const row = await sql<{ ms: string }>`select (extract(epoch from clock_timestamp()) * 1000)::bigint as ms`.execute(database.db);
  return Number(row.rows[0]!.ms) - (before + Date.now()) / 2;
}

/** A clock reading as a line: within SKEW_WARN_MS, or a warning with the fix. */
export function skewLine(name: string, skewMs: number): Check {
  const shown = `${skewMs >= 0 ? '+' : ''}${Math.round(skewMs)} ms against this machine`;
  return Math.abs(skewMs) <= SKEW_WARN_MS
    ? { name, status: 'ok', detail: shown }
    : { name, status: 'warn', detail: shown, fix: 'run an NTP client (chrony, systemd-timesyncd) on every machine' };
}

/** Owner-only permissions of the data folder, the database file, the key file and a config file holding secrets. */
export async function checkPermissions(config: Config, env: NodeJS.ProcessEnv): Promise<Check[]> {
  const files: Array<[string, string, number]> = [['data folder', config.DATA_DIR, 0o700]];
  if (config.DATABASE_URL.startsWith('sqlite:')) files.push(['database file', path.resolve(config.DATABASE_URL.slice('sqlite:'.length)), 0o600]);
  files.push(['secret key file', path.join(config.DATA_DIR, 'secret.key'), 0o600]);
  if (env.GENGATE_CONFIG) files.push(['config file', path.resolve(env.GENGATE_CONFIG), 0o600]);
  const out: Check[] = [];
  const uid = process.getuid?.();
  for (const [name, file, wanted] of files) {
    const s = await stat(file).catch(() => null);
    if (!s) {
      out.push({ name: `permissions: ${name}`, status: 'skip', detail: `${file} does not exist yet` });
      continue;
    }
    const mode = s.mode & 0o777;
    if (uid !== undefined && s.uid !== uid) {
      out.push({
        name: `permissions: ${name}`,
        status: 'fail',
        detail: `${file} belongs to uid ${s.uid}, GenGate runs as ${uid}`,
        fix: `chown ${uid} ${file}`,
      });
    } else if (mode & 0o077) {
      out.push({
        name: `permissions: ${name}`,
        status: 'warn',
        detail: `${file} is mode ${mode.toString(8)}: others may read it`,
        fix: `chmod ${wanted.toString(8)} ${file}`,
      });
    } else if (
      s.isDirectory() &&
      (await access(file, constants.W_OK).then(
        () => false,
        () => true,
      ))
    ) {
      out.push({ name: `permissions: ${name}`, status: 'fail', detail: `${file} is not writable`, fix: `chmod u+rwx ${file}` });
    } else out.push({ name: `permissions: ${name}`, status: 'ok', detail: `${file} mode ${mode.toString(8)}` });
  }
  return out;
}

/** The credit a kie.ai account has (GET /api/v1/chat/credit), or why it could not be read. */
async function kieCredit(base: string, key: string): Promise<number | string> {
  const res = await fetch(`${base}/api/v1/chat/credit`, { headers: { authorization: `Bearer ${key}` }, signal: AbortSignal.timeout(5_000) });
  const body = (await res.json().catch(() => null)) as { code?: unknown; data?: unknown } | null;
  if (res.ok && typeof body?.data === 'number' && (body.code === undefined || Number(body.code) === 200)) return body.data;
  return `HTTP ${res.status}${body && typeof body === 'object' && 'msg' in body ? `: ${String((body as { msg: unknown }).msg).slice(0, 100)}` : ''}`;
}

/**
 * Each upstream route of the catalog: its credential is set, its address answers HTTP (any
 * status: a 404 still proves the way is open), and a kie route's credit is above its min_credit.
 */
export async function checkRoutes(config: Config, catalog: Catalog, defaults: Readonly<Record<string, string>>): Promise<Check[]> {
  const out: Check[] = [];
  const seen = new Set<string>();
  for (const model of catalog.models) {
    for (const route of model.routes) {
      if (route.backend === 'local') continue;
      const name = `route ${route.name ?? `${route.backend}:${model.id}`}`;
      if (seen.has(name)) continue;
      seen.add(name);
      const key = route.keyEnv ? config.secrets[route.keyEnv] : undefined;
      if (route.keyEnv && !key) {
        out.push({
          name,
          status: 'fail',
          detail: `${route.keyEnv} is not set`,
          fix: `set ${route.keyEnv} to the provider's API key (workers refuse to start without it)`,
        });
        continue;
      }
      const base = route.backend === 'comfyui' ? route.servers?.[0] : (route.baseUrl ?? defaults[route.backend]);
      if (!base) {
        out.push({ name, status: 'skip', detail: `no address known for ${route.backend}` });
        continue;
      }
      const started = Date.now();
      const answered = await fetch(base, { signal: AbortSignal.timeout(5_000) }).then(
        (r) => `HTTP ${r.status}`,
        (e: Error) => new Error(e.cause instanceof Error ? e.cause.message : e.message),
      );
      if (answered instanceof Error) {
        out.push({
          name,
          status: 'fail',
          detail: `${base} does not answer (${answered.message})`,
          fix: 'check DNS, the firewall and any proxy between this machine and the provider',
        });
        continue;
      }
      let detail = `${base} answers (${answered}, ${Date.now() - started} ms)`;
      if (route.backend !== 'kie' || !key) {
        out.push({ name, status: 'ok', detail: `${detail}; credit not reported by ${route.backend}` });
        continue;
      }
      const credit = await kieCredit(base, key).catch((e: Error) => e.message);
      if (typeof credit === 'string') {
        out.push({ name, status: 'fail', detail: `${detail}; credit unreadable (${credit})`, fix: `check ${route.keyEnv}: the provider refused it` });
        continue;
      }
      detail += `; credit ${credit}`;
      const low = route.minCredit !== undefined && credit < route.minCredit;
      out.push(
        low
          ? { name, status: 'warn', detail: `${detail}, below min_credit ${route.minCredit}: the route is skipped`, fix: 'top up the provider account' }
          : { name, status: 'ok', detail },
      );
    }
  }
  if (out.length === 0) out.push({ name: 'routes', status: 'ok', detail: 'no upstream routes (the local backend only)' });
  return out;
}
