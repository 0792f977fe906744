import { Errors, shown } from '../errors.js';
import { roundHalfUp } from './coerce.js';
import { orList } from './links.js';
import type { Catalog, ModelDef } from './types.js';
import type { ValidatedInput } from './validate.js';

/**
 * The draft flow (SPEC, seedance-2.5): a draft is created with `draft: true` (480p); its final is
 * requested with `draft_task_id` and nothing but output_format, watermark and return_last_frame.
 * Validation checks that shape here; the lifecycle finds the draft task (success, not older than
 * `draft.keepDays` days, same account) and calls resolveDraftFinal to get the input it renders.
 */

/** The task a draft_task_id points at, as the lifecycle found it. */
export interface DraftTask {
  readonly taskId: string;
  readonly model: string;
  /** The draft's normalised input. */
  readonly input: Readonly<Record<string, unknown>>;
  /** Real length of the draft video in seconds, when known; fixes an automatic length for the final. */
  readonly realSeconds?: number;
}

/** Reads the shape of a draft-final request; refuses every other field by name. */
export function readDraftFinal(
  model: ModelDef,
  sent: ReadonlyMap<string, readonly { readonly value: unknown; readonly as: string }[]>,
  read: (field: string) => unknown,
): Record<string, unknown> {
  const rules = model.draft!;
  const out: Record<string, unknown> = { draft_task_id: read('draft_task_id') };
  for (const [field, given] of sent) {
    if (field === 'draft_task_id') continue;
    const first = given[0]!;
    if (field === 'draft') {
      if (read('draft') === false) continue;
      throw Errors.invalid(
        `input.draft and input.draft_task_id cannot be sent together for ${model.id}: draft true makes a new draft, draft_task_id renders the final of a finished one (got draft ${shown(first.value)})`,
      );
    }
    if (!rules.finalMayChange.includes(field)) {
      throw Errors.invalid(
        `input.${first.as} cannot be sent with input.draft_task_id for ${model.id}: a draft final takes its prompt, media and settings from the draft and may change only ${orList(rules.finalMayChange)} (got ${shown(first.value)})`,
      );
    }
    out[field] = read(field);
  }
  return out;
}

/**
 * The input a draft final renders: the draft's input with the allowed changes, `draft` off, the
 * final resolution, and `draft_task_id` kept (pricing bills it as a final: no source seconds).
 * An automatic length becomes the draft's real length. Refuses a task that is not a draft of this model.
 */
export function resolveDraftFinal(catalog: Catalog, final: ValidatedInput, draft: DraftTask): Record<string, unknown> {
  const model = catalog.find(final.model);
  const rules = model?.draft;
  if (!model || !rules || !final.draftFinal) throw new Error(`resolveDraftFinal needs a validated draft final (got ${final.model})`);
  const finalInput = final.input;
  const id = shown(draft.taskId);
  if (draft.model !== model.id) {
    throw Errors.invalid(`input.draft_task_id must be a draft of ${model.id} (got ${id}, a task of ${draft.model})`);
  }
  if (draft.input.draft !== true) {
    throw Errors.invalid(`input.draft_task_id must be a task created with input.draft true for ${model.id} (got ${id}, which is not a draft)`);
  }
  const merged: Record<string, unknown> = { ...draft.input };
  for (const field of rules.finalMayChange) {
    if (finalInput[field] !== undefined) merged[field] = finalInput[field];
  }
  merged.draft = false;
  merged.draft_task_id = finalInput.draft_task_id;
  merged.resolution = rules.finalResolution;
  if (merged.duration === 'auto' && draft.realSeconds !== undefined && model.autoLengthSeconds) {
    merged.duration = Math.min(model.autoLengthSeconds, Math.max(1, roundHalfUp(draft.realSeconds)));
  }
  return merged;
}
