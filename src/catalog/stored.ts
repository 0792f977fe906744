import { ConfigError } from '../config.js';
import { AppError, Errors, shown } from '../errors.js';
import type { Database, DB } from '../store/index.js';
import type { Kysely } from 'kysely';
import { makeCatalog } from './catalog.js';
import { problemText, readDefinition, type DefinitionProblem } from './definitions.js';
import { checkRouteNames } from './routes.js';
import type { Catalog, ModelDef } from './types.js';

/**
 * Model definitions kept in the database (decision 3304): the definition files (catalog/,
 * GENGATE_MODELS, GENGATE_CATALOG) are the base layer; a stored version of a model replaces the
 * file's or adds a model, and a retired one takes no new tasks. Every change is a numbered version
 * (who, when, what); `model_definitions` holds the version in force. Pure over rows here; the live
 * catalog that polls and swaps is live.ts.
 */

export type DefinitionAction = 'create' | 'edit' | 'retire' | 'restore';

/** The version in force of one stored model (a row of model_definitions). */
export interface CurrentRow {
  readonly modelId: string;
  readonly version: number;
  readonly retired: boolean;
  /** The definition's JSON; null: the definition file's model stands. */
  readonly body: string | null;
  readonly updatedAt: number;
  readonly by: string;
}

/** One change, as the admin API and the CLI show it. */
export interface DefinitionVersion {
  version: number;
  action: DefinitionAction;
  who: string;
  note: string | null;
  at: number;
  /** The definition of this version; null when it is the definition file's. */
  definition: Record<string, unknown> | null;
}

/** A refused definition: every problem, each `where: why` (the running catalog is unchanged). */
export function refusal(id: string, problems: readonly DefinitionProblem[]) {
  const lines = problems.map((p) => (p.where ? `${p.where}: ${p.why}` : p.why));
  return new AppError('invalid_request', `definition of ${id} refused (the catalog in force is unchanged): ${lines.join('; ')}`, {
    problems: problems.map((p) => ({ where: p.where, line: p.line, why: p.why })),
  });
}

/** Compiles a stored definition's JSON (its problems as the definition file reader words them). */
export function compileStored(id: string, version: number, body: string): { model?: ModelDef; problems: DefinitionProblem[] } {
  const read = readDefinition(`${id}@v${version}.json`, body);
  if (read.model && read.model.id !== id) {
    return {
      problems: [
        { file: `${id}@v${version}.json`, line: 1, where: 'id', why: `must be ${shown(id)}, the id it is stored under (got ${shown(read.model.id)})` },
      ],
    };
  }
  return read.model ? { model: { ...read.model, version, source: `database v${version}` }, problems: [] } : { problems: read.problems };
}

/** Compiled stored models by `id@version`: a reload compiles only what changed. */
export class CompiledCache {
  private readonly byKey = new Map<string, ModelDef>();

  /** The compiled model of a row, or the problems (a row written by a newer release may not compile here). */
  get(row: { modelId: string; version: number; body: string }): { model?: ModelDef; problems: DefinitionProblem[] } {
    const key = `${row.modelId}@${row.version}`;
    const hit = this.byKey.get(key);
    if (hit) return { model: hit, problems: [] };
    const out = compileStored(row.modelId, row.version, row.body);
    if (out.model) this.byKey.set(key, out.model);
    return out;
  }

  /** Keeps only the keys still in force. */
  keep(keys: ReadonlySet<string>): void {
    for (const k of this.byKey.keys()) if (!keys.has(k)) this.byKey.delete(k);
  }
}

/**
 * The catalog of the file layer with the stored rows on top: a stored body replaces the model of
 * the same id or adds one (in id order after the file's), a retired row moves the model out of
 * `models` (still found by name for its tasks). Throws ConfigError when names or route names clash.
 * `compile` turns a row's body into a model; a row that does not compile leaves the file's model
 * (the problems go to `broken`).
 */
export function layered(
  file: Catalog,
  rows: readonly CurrentRow[],
  compile: (row: CurrentRow & { body: string }) => { model?: ModelDef; problems: DefinitionProblem[] },
  broken: (row: CurrentRow, problems: DefinitionProblem[]) => void = () => {},
): Catalog {
  if (rows.length === 0) return file;
  const replaced = new Map<string, ModelDef>();
  const retired: ModelDef[] = [];
  for (const row of rows) {
    let model = file.models.find((m) => m.id === row.modelId);
    if (row.body !== null) {
      const out = compile(row as CurrentRow & { body: string });
      if (out.model) model = out.model;
      else broken(row, out.problems);
    }
    if (!model) continue;
    if (row.retired) retired.push({ ...model, retired: { at: row.updatedAt, by: row.by, version: row.version } });
    else replaced.set(model.id, { ...model, version: row.version });
  }
  const retiredIds = new Set(retired.map((m) => m.id));
  const models = file.models.filter((m) => !retiredIds.has(m.id)).map((m) => replaced.get(m.id) ?? m);
  const added = [...replaced.values()].filter((m) => !file.models.some((f) => f.id === m.id)).sort((a, b) => a.id.localeCompare(b.id));
  const all = [...models, ...added];
  checkRouteNames(all, (where, why) => new ConfigError(`${where}: ${why}`));
  return makeCatalog(all, 'stored definitions', retired);
}

/** The rows in force, read in one query. */
export async function currentRows(db: Kysely<DB>): Promise<CurrentRow[]> {
  const rows = await db.selectFrom('model_definitions').selectAll().orderBy('model_id').execute();
  const by = await db
    .selectFrom('model_definition_versions as v')
    .innerJoin('model_definitions as d', (j) => j.onRef('d.model_id', '=', 'v.model_id').onRef('d.version', '=', 'v.version'))
    .select(['v.model_id', 'v.who'])
    .execute();
  const who = new Map(by.map((r) => [r.model_id, r.who]));
  return rows.map((r) => ({
    modelId: r.model_id,
    version: Number(r.version),
    retired: Number(r.retired) === 1,
    body: r.body,
    updatedAt: Number(r.updated_at),
    by: who.get(r.model_id) ?? '',
  }));
}

/** The catalog's generation: the newest version row's id (0 before any change); every process polls it. */
export async function generation(db: Kysely<DB>): Promise<number> {
  const row = await db
    .selectFrom('model_definition_versions')
    .select((e) => e.fn.max('id').as('g'))
    .executeTakeFirst();
  return Number(row?.g ?? 0);
}

/** Every version of a model, newest first. */
export async function versionsOf(db: Kysely<DB>, modelId: string): Promise<DefinitionVersion[]> {
  const rows = await db.selectFrom('model_definition_versions').selectAll().where('model_id', '=', modelId).orderBy('version', 'desc').execute();
  return rows.map((r) => ({
    version: Number(r.version),
    action: r.action,
    who: r.who,
    note: r.note,
    at: Number(r.created_at),
    definition: r.body === null ? null : (JSON.parse(r.body) as Record<string, unknown>),
  }));
}

/**
 * Writes one change in one transaction: the version row and the row in force. `expect` is the
 * version the change was made on (0: none stored); another change in between is a 409, so two
 * operators (or processes) never overwrite each other unseen.
 */
export async function writeVersion(
  database: Database,
  change: { modelId: string; expect: number; action: DefinitionAction; body: string | null; retired: boolean; who: string; note: string | null; at: number },
): Promise<number> {
  return database.tx(async (trx) => {
    await database.lock(trx, `model-definition:${change.modelId}`);
    const row = await trx.selectFrom('model_definitions').select('version').where('model_id', '=', change.modelId).executeTakeFirst();
    const current = row ? Number(row.version) : 0;
    if (current !== change.expect) {
      throw Errors.conflict(
        `${change.modelId} changed meanwhile: its stored version is ${current}, this change was made on ${change.expect}; read it again and retry`,
      );
    }
    const version = current + 1;
    await trx
      .insertInto('model_definition_versions')
      .values({ model_id: change.modelId, version, action: change.action, body: change.body, who: change.who, note: change.note, created_at: change.at })
      .execute();
    const set = { version, retired: change.retired ? 1 : 0, body: change.body, updated_at: change.at };
    if (row) await trx.updateTable('model_definitions').set(set).where('model_id', '=', change.modelId).execute();
    else
      await trx
        .insertInto('model_definitions')
        .values({ model_id: change.modelId, ...set })
        .execute();
    return version;
  });
}

/** The problems as one text, for logs and the CLI. */
export const problemsText = (problems: readonly DefinitionProblem[]) => problems.map(problemText).join('\n');
