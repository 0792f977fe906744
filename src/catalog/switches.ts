import type { Clock } from '../clock.js';
import { Errors, shown } from '../errors.js';
import type { Database } from '../store/index.js';
import { makeCatalog } from './catalog.js';
import type { Catalog, ModelDef } from './types.js';

/** One model as the operator sees it: the catalog's default and the switch in force. */
export interface ModelSwitchView {
  id: string;
  enabled: boolean;
  /** What the catalog (file) says; the switch, when set, overrides it. */
  catalogEnabled: boolean;
  switchedAt: number | null;
}

/**
 * The operator's model switches (CLI / admin API), stored in `model_switches` so every process
 * sees them. Reads are free: `catalog` is a live view rebuilt only when a switch changes; this
 * process's own changes apply at once, other processes' within the refresh interval.
 */
export class ModelSwitches {
  private current: Catalog;
  private switches = new Map<string, { enabled: boolean; at: number }>();
  private timer: NodeJS.Timeout | null = null;
  /** The catalog with the switches applied; pass this one around (same object for the life of the process). */
  readonly catalog: Catalog;

  constructor(
    private readonly database: Database,
    private base: Catalog,
    private readonly clock: Clock,
  ) {
    this.current = base;
    // The catalog object is handed out once and must always show the current switches: its getters read this instance.
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    const self = this;
    this.catalog = {
      get models() {
        return self.current.models;
      },
      find: (name) => self.current.find(name),
      snapshot: () => self.current,
    };
  }

  /** A new catalog under the switches (the live catalog reloaded, decision 3305): swapped in at once. */
  rebase(base: Catalog): void {
    this.base = base;
    this.rebuild();
  }

  /** Reads the switches from the database and rebuilds the view when they changed. */
  async refresh(): Promise<void> {
    const rows = await this.database.db.selectFrom('model_switches').selectAll().execute();
    const next = new Map(rows.map((r) => [r.model_id, { enabled: Number(r.enabled) === 1, at: Number(r.updated_at) }]));
    const same = next.size === this.switches.size && [...next].every(([id, s]) => this.switches.get(id)?.enabled === s.enabled);
    this.switches = next;
    if (!same) this.rebuild();
  }

  /** The base with the switches applied, built whole and swapped in one assignment. */
  private rebuild(): void {
    const base = this.base;
    const models = base.models.map((m): ModelDef => {
      const s = this.switches.get(m.id);
      return s && s.enabled !== m.enabled ? { ...m, enabled: s.enabled } : m;
    });
    if (!models.some((m, i) => m !== base.models[i])) {
      this.current = base;
      return;
    }
    const switched = makeCatalog(models);
    // Retired models are not in `models` but stay findable by name (their tasks run on), as in the base.
    this.current = { models: switched.models, find: (name) => switched.find(name) ?? base.find(name) };
  }

  /** Refreshes every `everyMs` in the background (unref'd: it never keeps the process alive). */
  start(everyMs: number): void {
    if (this.timer || everyMs <= 0) return;
    this.timer = setInterval(() => void this.refresh().catch(() => {}), everyMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Every model with its switch. */
  async list(): Promise<ModelSwitchView[]> {
    await this.refresh();
    return this.base.models.map((m) => this.view(m));
  }

  /** Switches a model (id or alias) on or off for every process; returns its view. */
  async set(name: string, enabled: boolean): Promise<ModelSwitchView> {
    const model = this.base.find(name);
    if (!model) throw Errors.notFound(`model ${shown(name)} is not in the catalog`);
    const now = this.clock.now();
    await this.database.tx(
      (w) =>
        w
          .insertInto('model_switches')
          .values({ model_id: model.id, enabled: enabled ? 1 : 0, updated_at: now })
          .onConflict((oc) => oc.column('model_id').doUpdateSet({ enabled: enabled ? 1 : 0, updated_at: now }))
          .execute(),
      { atomic: false },
    );
    await this.refresh();
    return this.view(model);
  }

  private view(m: ModelDef): ModelSwitchView {
    const s = this.switches.get(m.id);
    return { id: m.id, enabled: s ? s.enabled : m.enabled, catalogEnabled: m.enabled, switchedAt: s ? s.at : null };
  }
}
