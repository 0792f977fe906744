import type { Clock } from '../clock.js';
import { ConfigError } from '../config.js';
import { Errors, shown } from '../errors.js';
import type { Database } from '../store/index.js';
import type { DefinitionProblem } from './definitions.js';
import {
  CompiledCache,
  compileStored,
  currentRows,
  generation,
  layered,
  refusal,
  versionsOf,
  writeVersion,
  type CurrentRow,
  type DefinitionAction,
  type DefinitionVersion,
} from './stored.js';
import type { Catalog, ModelDef } from './types.js';

/** One model as the definitions API lists it. */
export interface DefinitionView {
  id: string;
  title: string;
  kind: string;
  /** file: only the definition file; database: only stored; both: a stored version over a file's. */
  source: 'file' | 'database' | 'both';
  /** The stored version in force (0: none stored). */
  version: number;
  retired: boolean;
  updatedAt: number | null;
  updatedBy: string | null;
}

/** A model's view with every stored version, newest first. */
export interface DefinitionDetail extends DefinitionView {
  /** The definition in force (null: the file's, not kept in the database; `source` names the file). */
  definition: Record<string, unknown> | null;
  file: string | null;
  versions: DefinitionVersion[];
}

/**
 * The live catalog (decision 3305): the definition files with the stored definitions on top,
 * rebuilt as one immutable Catalog and swapped in one assignment, so a request that took the old
 * one finishes on it. A change made here applies here at once; other processes see it when they
 * next poll the generation (`tick`, every `pollMs` of the injected clock). A stored definition that
 * no longer compiles (written by a newer release) leaves the file's model and is reported, never
 * thrown: the catalog in force stays whole.
 */
export class LiveCatalog {
  private current: Catalog;
  private rows: CurrentRow[] = [];
  private seen = -1;
  private nextPoll = 0;
  private polling: Promise<boolean> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private readonly cache = new CompiledCache();
  private readonly listeners: Array<(catalog: Catalog) => void> = [];
  /** Stored rows that did not compile at the last reload, with why. */
  broken: { id: string; version: number; problems: DefinitionProblem[] }[] = [];

  constructor(
    private readonly database: Database,
    readonly file: Catalog,
    private readonly clock: Clock,
    private readonly pollMs: number,
  ) {
    this.current = file;
  }

  /** The immutable catalog in force now. */
  get catalog(): Catalog {
    return this.current;
  }

  /** The generation this process last loaded (the newest version row's id). */
  get loaded(): number {
    return this.seen;
  }

  /** Calls `fn` with every new catalog (the model switches layer on top of it). */
  onChange(fn: (catalog: Catalog) => void): void {
    this.listeners.push(fn);
  }

  /** Reloads when the generation moved; true when a new catalog is in force. One reload at a time. */
  refresh(): Promise<boolean> {
    this.polling ??= this.reload().finally(() => (this.polling = null));
    return this.polling;
  }

  /** What the timer calls: a refresh when `pollMs` of the injected clock have passed since the last one. */
  async tick(): Promise<boolean> {
    const now = this.clock.now();
    if (now < this.nextPoll) return false;
    return this.refresh();
  }

  /** Ticks every `everyMs` of real time in the background (unref'd). */
  start(everyMs: number): void {
    if (this.timer || everyMs <= 0) return;
    this.timer = setInterval(() => void this.tick().catch(() => {}), everyMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private async reload(): Promise<boolean> {
    const db = this.database.db;
    // Any read of the generation puts the next poll off by pollMs (of the injected clock).
    this.nextPoll = this.clock.now() + this.pollMs;
    const gen = await generation(db);
    if (gen === this.seen) return false;
    const rows = await currentRows(db);
    const broken: LiveCatalog['broken'] = [];
    let next: Catalog;
    try {
      next = layered(
        this.file,
        rows,
        (r) => this.cache.get(r),
        (r, problems) => broken.push({ id: r.modelId, version: r.version, problems }),
      );
    } catch (e) {
      if (!(e instanceof ConfigError)) throw e;
      // Names that clash across stored rows (two processes' races): keep what is in force.
      this.broken = [{ id: '(catalog)', version: gen, problems: [{ file: 'database', line: 1, where: '', why: e.message }] }];
      this.seen = gen;
      return false;
    }
    this.cache.keep(new Set(rows.filter((r) => r.body !== null).map((r) => `${r.modelId}@${r.version}`)));
    this.rows = rows;
    this.broken = broken;
    this.seen = gen;
    this.current = next;
    for (const fn of this.listeners) fn(next);
    return true;
  }

  /** Every model, in force or retired, with its source and stored version. */
  async list(): Promise<DefinitionView[]> {
    await this.refresh();
    const retired = this.rows.filter((r) => r.retired).map((r) => this.current.find(r.modelId)!);
    return [...this.current.models, ...retired.filter(Boolean)].map((m) => this.view(m));
  }

  /** One model (id or alias) with its stored versions; 404 when neither a file nor the database has it. */
  async get(name: string): Promise<DefinitionDetail> {
    await this.refresh();
    const model = this.current.find(name) ?? this.file.find(name);
    if (!model) throw Errors.notFound(`model ${shown(name)} has no definition (neither a definition file nor the database has it)`);
    const versions = await versionsOf(this.database.db, model.id);
    const row = this.rows.find((r) => r.modelId === model.id);
    return {
      ...this.view(model),
      definition: row?.body ? (JSON.parse(row.body) as Record<string, unknown>) : null,
      file: this.file.find(model.id)?.source ?? null,
      versions,
    };
  }

  /**
   * Checks a definition without storing it: the compiled model, or a 400 naming every problem. It
   * must also fit the catalog in force (no name or route name of another model).
   */
  check(id: string, definition: unknown): ModelDef {
    if (definition === null || typeof definition !== 'object' || Array.isArray(definition)) {
      throw Errors.invalid(
        `the definition of ${id} must be a JSON object in the model definition format (docs/model-definition.schema.json); got ${shown(definition)}`,
      );
    }
    const body = JSON.stringify({ id, ...definition }, null, 2);
    const out = compileStored(id, 0, body);
    if (!out.model) throw refusal(id, out.problems);
    const rows = [...this.rows.filter((r) => r.modelId !== id), { modelId: id, version: 0, retired: false, body, updatedAt: 0, by: '' }];
    try {
      layered(this.file, rows, (r) => (r.modelId === id ? out : this.cache.get(r)));
    } catch (e) {
      if (!(e instanceof ConfigError)) throw e;
      throw refusal(id, [{ file: '', line: 1, where: 'id', why: e.message }]);
    }
    return out.model;
  }

  /** Stores a new version of a model (create or edit) for every process; refused with every problem when it does not check. */
  async put(id: string, definition: unknown, who: string, opts: { note?: string; expect?: number } = {}): Promise<DefinitionDetail> {
    await this.refresh();
    this.check(id, definition);
    const row = this.rows.find((r) => r.modelId === id);
    if (row?.retired) throw Errors.conflict(`${id} is retired; restore it first (POST /admin/v1/definitions/${encodeURIComponent(id)}/restore)`);
    const action: DefinitionAction = row || this.file.find(id) ? 'edit' : 'create';
    const body = JSON.stringify({ id, ...(definition as object) });
    return this.change(id, opts.expect ?? row?.version ?? 0, action, body, false, who, opts.note);
  }

  /** Retires a model: no new tasks from now on, in every process; its tasks stay readable. */
  async retire(name: string, who: string, opts: { note?: string; expect?: number } = {}): Promise<DefinitionDetail> {
    await this.refresh();
    const model = this.current.find(name);
    if (!model) throw Errors.notFound(`model ${shown(name)} is not in the catalog`);
    if (model.retired) throw Errors.conflict(`${model.id} is already retired (version ${model.retired.version})`);
    const row = this.rows.find((r) => r.modelId === model.id);
    return this.change(model.id, opts.expect ?? row?.version ?? 0, 'retire', row?.body ?? null, true, who, opts.note);
  }

  /**
   * Puts a retired model back, or any earlier version back in force (`version`), as a new version.
   * The body restored is that version's (null: the definition file's).
   */
  async restore(name: string, who: string, opts: { note?: string; version?: number; expect?: number } = {}): Promise<DefinitionDetail> {
    await this.refresh();
    const model = this.current.find(name) ?? this.file.find(name);
    const row = model && this.rows.find((r) => r.modelId === model.id);
    if (!model || !row) throw Errors.notFound(`model ${shown(name)} has no stored versions to restore`);
    let body = row.body;
    if (opts.version !== undefined) {
      const earlier = (await versionsOf(this.database.db, model.id)).find((v) => v.version === opts.version);
      if (!earlier) throw Errors.notFound(`${model.id} has no version ${opts.version} (it has 1 to ${row.version})`);
      body = earlier.definition === null ? null : JSON.stringify(earlier.definition);
      if (body !== null) this.check(model.id, earlier.definition);
    } else if (!row.retired) {
      throw Errors.conflict(`${model.id} is not retired; name a version to put back ({"version": N})`);
    }
    if (body === null && !this.file.find(model.id)) throw Errors.conflict(`${model.id} has no definition file to fall back to`);
    return this.change(model.id, opts.expect ?? row.version, 'restore', body, false, who, opts.note);
  }

  private async change(id: string, expect: number, action: DefinitionAction, body: string | null, retired: boolean, who: string, note?: string) {
    await writeVersion(this.database, { modelId: id, expect, action, body, retired, who, note: note ?? null, at: this.clock.now() });
    await this.refresh();
    return this.get(id);
  }

  private view(m: ModelDef): DefinitionView {
    const row = this.rows.find((r) => r.modelId === m.id);
    const inFile = this.file.find(m.id)?.id === m.id;
    return {
      id: m.id,
      title: m.title,
      kind: m.kind,
      source: row?.body ? (inFile ? 'both' : 'database') : 'file',
      version: row?.version ?? 0,
      retired: m.retired !== undefined,
      updatedAt: row?.updatedAt ?? null,
      updatedBy: row?.by ?? null,
    };
  }
}
