import type { Selectable } from 'kysely';
import type { BackendJob } from '../backends/index.js';
import type { Catalog } from '../catalog/index.js';
import type { TasksTable } from '../store/index.js';

/** The job a backend sees, from the task row (the engine's steps and the cancel use it). */
export function jobOf(task: Pick<Selectable<TasksTable>, 'id' | 'model' | 'input' | 'media'> & { param?: string }, catalog: Catalog): BackendJob {
  const model = catalog.find(task.model);
  return {
    taskId: task.id,
    model: task.model,
    // A model removed from the catalog after the task was created: kind from the stored result shape is unknown; image is the safe guess.
    kind: model?.kind ?? 'image',
    input: JSON.parse(task.input) as Record<string, unknown>,
    media: task.media ? (JSON.parse(task.media) as Record<string, never>) : {},
    ...(task.param ? { sent: sentBody(task.param) } : {}),
  };
}

/** The body as the client sent it (`param`), an object; a `param` that is not one (never written so) gives an empty object. */
function sentBody(param: string): Record<string, unknown> {
  try {
    const v: unknown = JSON.parse(param);
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
