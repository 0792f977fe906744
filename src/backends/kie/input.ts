import { KIE_ALIASES, KIE_JPG_IDS, KIE_SUNO, KIE_SUNO_VERSIONS, type KieAlias } from '../../catalog/index.js';

/**
 * GenGate input → kie.ai input (DECISIONS §19, decision 0400: "share one table"). The kie.ai ids
 * and their input mappings of src/catalog/kie.ts (and the Suno body of src/catalog/kie-suno.ts)
 * are read backwards: a rule `sent → field` becomes `field → sent`, a list spread over fields is
 * gathered again, a value map is inverted. Nothing here names a kie.ai field on its own except the
 * "jpg" spelling, which GenGate accepts everywhere and so is not in the table.
 */

/** Fields GenGate applied itself before the hand-off (trims, the draft merge): never sent upstream. */
const OURS = ['draft_task_id', 'trim_video_to', 'trim_to_duration', 'auto_trim'];
/** Fields whose presence tells an image-to-* kie.ai id from its text-to-* sibling. */
const PHOTO_FIELDS = new Set(['image_input', 'first_frame_url', 'last_frame_url']);

type Rule = string | { to?: string | readonly string[]; values?: Record<string, string>; ignore?: unknown; instead?: string };

/** The fields a row's rules fill (for telling sibling ids apart). */
function targets(row: KieAlias): string[] {
  return Object.values(row.input).flatMap((rule) => {
    const r = rule as Rule;
    if (typeof r === 'string') return [r];
    if (typeof r.to === 'string') return [r.to];
    return Array.isArray(r.to) ? [...(r.to as string[])] : [];
  });
}

/** The row of a kie.ai id, if the shared table has it. */
export function kieRow(id: string): KieAlias | undefined {
  return KIE_ALIASES.find((r) => r.name === id);
}

/**
 * The kie.ai id a task goes to: the route's `model` when it is set (a row of the table, or an id the
 * table does not know: undefined, sent with GenGate's names), else the id the client sent when it is
 * one of this model's, else the model's row that fits the input (a photo present → its image-to-*
 * id). Undefined too when the table has no kie.ai id for the model.
 */
export function pickRow(routeModel: string, model: string, input: Readonly<Record<string, unknown>>, sentModel: unknown): KieAlias | undefined {
  const fixed = kieRow(routeModel);
  if (fixed) return fixed;
  // The route names a kie.ai id the table does not know (the registry passes the model id when the route names none).
  if (routeModel !== model) return undefined;
  const rows = KIE_ALIASES.filter((r) => r.model === model);
  const sent = rows.find((r) => r.name === sentModel);
  if (sent) return sent;
  if (rows.length <= 1) return rows[0];
  const has = (f: string) => input[f] !== undefined && !(Array.isArray(input[f]) && input[f].length === 0);
  const withPhoto = rows.find((r) => targets(r).some((f) => PHOTO_FIELDS.has(f) && has(f)));
  return withPhoto ?? rows.find((r) => !targets(r).some((f) => PHOTO_FIELDS.has(f))) ?? rows[0];
}

/**
 * The `input` of kie.ai's createTask for `row`: GenGate's names renamed back, kie.ai-only fields
 * GenGate ignored passed as the client sent them under a kie.ai id, GenGate's own fields left out.
 * Without a row (an id the table does not know) the GenGate names are sent as they are.
 */
export function kieInput(
  row: KieAlias | undefined,
  input: Readonly<Record<string, unknown>>,
  sent: Readonly<Record<string, unknown>> | undefined,
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...input };
  for (const f of OURS) delete out[f];
  if (!row) return out;
  const sentRow = typeof sent?.model === 'string' ? kieRow(sent.model) : undefined;
  const sentInput = sent?.input && typeof sent.input === 'object' ? (sent.input as Record<string, unknown>) : {};
  for (const [name, rule] of Object.entries(row.input) as [string, Rule][]) {
    if (typeof rule === 'string') {
      if (rule in out) move(out, rule, name);
    } else if (typeof rule.to === 'string') {
      if (rule.to in out) {
        const value = out[rule.to];
        delete out[rule.to];
        out[name] = rule.values ? invert(rule.values, value) : value;
      }
    } else if (Array.isArray(rule.to)) {
      const list = (rule.to as string[]).map((f) => out[f]).filter((v) => v !== undefined && v !== null);
      for (const f of rule.to as string[]) delete out[f];
      if (list.length > 0) out[name] = list;
    } else if (rule.ignore !== undefined) {
      // Accepted and ignored by GenGate (DECISIONS §18): passed on as sent, when the client sent it under a kie.ai id that has it.
      const ignoredThere = sentRow && typeof sentRow.input[name] === 'object' && 'ignore' in (sentRow.input[name] as object);
      if (ignoredThere && sentInput[name] !== undefined) out[name] = sentInput[name];
    }
  }
  if (KIE_JPG_IDS.has(row.name) && out.output_format === 'jpeg') out.output_format = 'jpg';
  return out;
}

function move(out: Record<string, unknown>, from: string, to: string): void {
  out[to] = out[from];
  delete out[from];
}

/** The sent value whose mapped value is `value` (the first one, matching regardless of case); the value itself when none maps to it. */
function invert(values: Readonly<Record<string, string>>, value: unknown): unknown {
  const hit = Object.entries(values).find(([, v]) => typeof value === 'string' && v.toLowerCase() === value.toLowerCase());
  return hit ? hit[0] : value;
}

/**
 * The body of kie.ai's Suno `POST /api/v1/generate` for a suno-v6 input: the Suno mapping of
 * src/catalog/kie-suno.ts backwards (custom_mode → customMode, version → model `V5` …,
 * vocal_gender → `m`/`f`). suno-v6 fields kie.ai's Suno body has no name for (duration, variety)
 * are not sent; "auto" weights and an "auto" voice are left to kie.ai's defaults.
 */
export function sunoBody(input: Readonly<Record<string, unknown>>, callBackUrl: string | undefined): Record<string, unknown> {
  const body: Record<string, unknown> = {
    prompt: input.prompt ?? '',
    customMode: input.custom_mode === true,
    instrumental: input.instrumental === true,
    model: invert(KIE_SUNO_VERSIONS, input.version ?? 'v6'),
  };
  for (const [name, rule] of Object.entries(KIE_SUNO.input) as [string, Rule][]) {
    if (name === 'model' || name === 'customMode') continue;
    const field = typeof rule === 'string' ? rule : (rule.to as string);
    const value = input[field];
    if (value === undefined || value === null || value === 'auto') continue;
    body[name] = typeof rule === 'string' || !rule.values ? value : invert(rule.values, value);
  }
  for (const same of ['style', 'title'] as const) if (typeof input[same] === 'string' && input[same] !== '') body[same] = input[same];
  if (callBackUrl) body.callBackUrl = callBackUrl;
  return body;
}
