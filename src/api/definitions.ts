import { z } from 'zod';
import { formatUsd } from '../billing/index.js';
import { makeCatalog, validateInput, type ModelDef } from '../catalog/index.js';
import { AppError, parseWith } from '../errors.js';
import { quote } from '../pricing/index.js';
import type { AdminCall, AdminOperation } from './admin.js';
import type { Reply } from './operation.js';

/**
 * The definitions part of the admin API (/admin/v1/definitions, decision 3307): models as data an
 * operator changes live. Every change is a stored version (who, when, what) that every process
 * loads within MODEL_SWITCH_CACHE_MS; a definition that does not check is refused with every
 * problem and changes nothing.
 */

const definition = z
  .record(z.string(), z.unknown())
  .describe('A model definition in the format of docs/model-definition.schema.json (JSON); its id may be left out');
const note = z.string().max(500).optional().describe('Why: kept with the version');
const expectVersion = z
  .number()
  .int()
  .min(0)
  .optional()
  .describe('The stored version this change was made on (0: none stored); another change in between answers 409');
const sample = z
  .object({
    input: z.record(z.string(), z.unknown()).describe('A createTask input'),
    media: z
      .record(z.string(), z.object({ seconds: z.number().min(0).optional(), kind: z.enum(['image', 'video', 'audio']).optional() }))
      .optional()
      .describe('Facts of media links in the input (seconds of a clip), as uploads would give them'),
  })
  .strict();

export const definitionBodies = {
  put: z.object({ definition, note, expectVersion }).strict(),
  validate: z.object({ definition }).strict(),
  retire: z.object({ note, expectVersion }).strict(),
  restore: z
    .object({ version: z.number().int().min(1).optional().describe('An earlier version to put back in force (default: the retired one)'), note, expectVersion })
    .strict(),
  preview: z
    .object({
      definition: definition.optional().describe('A definition to price with (default: the one in force)'),
      samples: z.array(sample).min(1).max(50),
    })
    .strict(),
};

const View = z.object({
  id: z.string(),
  title: z.string(),
  kind: z.string(),
  source: z.enum(['file', 'database', 'both']).describe('file: only its definition file; database: only stored; both: a stored version over the file'),
  version: z.number().int().describe('The stored version in force (0: none stored)'),
  retired: z.boolean(),
  updatedAt: z.number().int().nullable(),
  updatedBy: z.string().nullable(),
});
const Version = z.object({
  version: z.number().int(),
  action: z.enum(['create', 'edit', 'retire', 'restore']),
  who: z.string(),
  note: z.string().nullable(),
  at: z.number().int(),
  definition: z.record(z.string(), z.unknown()).nullable().describe("The definition of this version (null: the definition file's)"),
});
const Detail = View.extend({
  definition: z.record(z.string(), z.unknown()).nullable().describe("The stored definition in force (null: the definition file's)"),
  file: z.string().nullable().describe('The definition file of the base layer, if any'),
  versions: z.array(Version).describe('Newest first'),
});
const Checked = z.object({ ok: z.literal(true), id: z.string(), title: z.string(), kind: z.string(), fields: z.array(z.string()) });
const Priced = z.object({
  samples: z.array(
    z.object({
      ok: z.boolean(),
      price: z.string().optional().describe('USD, exact'),
      priceMicros: z.number().int().optional(),
      error: z.string().optional().describe('The refusal createTask would answer'),
    }),
  ),
});

const env = (schema: z.ZodType, description: string): Reply => ({ schema, envelope: true, description });
const param = { id: 'Model id, URL-encoded (a slash as %2F)' };
const modelId = (call: AdminCall) => {
  const raw = String((call.params as { id?: string }).id ?? '');
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
};
/** A change body's note, version to restore and expected version, as LiveCatalog takes them. */
const changeOpts = (b: { note?: string; expectVersion?: number; version?: number }) => ({
  ...(b.note !== undefined ? { note: b.note } : {}),
  ...(b.expectVersion !== undefined ? { expect: b.expectVersion } : {}),
  ...(b.version !== undefined ? { version: b.version } : {}),
});
const who = (call: AdminCall) => call.who ?? 'admin-token';

/** What a preview answers per sample: the price createTask would charge, or its refusal. */
function priceSamples(model: ModelDef, samples: z.output<typeof definitionBodies.preview>['samples']) {
  const catalog = makeCatalog([{ ...model, enabled: true, retired: undefined }]);
  return samples.map((s) => {
    try {
      const validated = validateInput(catalog, model.id, s.input);
      const q = quote(catalog, model.id, validated.input, s.media ?? {});
      return { ok: true, price: formatUsd(q.priceMicros, 6), priceMicros: q.priceMicros };
    } catch (e) {
      if (e instanceof AppError) return { ok: false, error: e.message };
      throw e;
    }
  });
}

type Base = Pick<AdminOperation['spec'], 'tag' | 'auth' | 'when' | 'errors'>;

/** The definitions operations, on the admin API's base spec. */
export function definitionOperations(base: Base): AdminOperation[] {
  const op = (spec: Omit<AdminOperation['spec'], keyof Base> & Partial<Base>, handle: AdminOperation['handle']): AdminOperation => ({
    spec: { ...base, ...spec },
    handle,
  });
  const data = async (v: Promise<unknown> | unknown) => ({ data: await v });
  return [
    op(
      {
        method: 'get',
        path: '/admin/v1/definitions',
        id: 'adminListDefinitions',
        summary: 'Every model definition, in force or retired',
        ok: env(z.array(View), 'Definitions'),
      },
      (s) => data(s.definitions.list()),
    ),
    op(
      {
        method: 'get',
        path: '/admin/v1/definitions/:id',
        id: 'adminGetDefinition',
        summary: 'One model definition with every stored version',
        params: param,
        ok: env(Detail, 'The definition'),
      },
      (s, call) => data(s.definitions.get(modelId(call))),
    ),
    op(
      {
        method: 'put',
        path: '/admin/v1/definitions/:id',
        id: 'adminPutDefinition',
        summary: 'Create or edit a model: a new version, in force in every process within MODEL_SWITCH_CACHE_MS',
        description: 'A definition that does not check is refused (400) with every problem in `data.problems`, and nothing changes.',
        params: param,
        body: definitionBodies.put,
        ok: env(Detail, 'The definition with its new version'),
        errors: ['invalid_request', 'missing_field', 'not_found', 'conflict'],
      },
      (s, call) => {
        const body = parseWith(definitionBodies.put, call.body, '');
        return data(s.definitions.put(modelId(call), body.definition, who(call), changeOpts(body)));
      },
    ),
    op(
      {
        method: 'post',
        path: '/admin/v1/definitions/:id/validate',
        id: 'adminValidateDefinition',
        summary: 'Check a definition without storing it',
        params: param,
        body: definitionBodies.validate,
        ok: env(Checked, 'It checks; 400 with every problem when it does not'),
      },
      (s, call) => {
        const m = s.definitions.check(modelId(call), parseWith(definitionBodies.validate, call.body, '').definition);
        return data({ ok: true, id: m.id, title: m.title, kind: m.kind, fields: [...m.fields.keys()] });
      },
    ),
    op(
      {
        method: 'post',
        path: '/admin/v1/definitions/:id/preview',
        id: 'adminPreviewDefinition',
        summary: 'Prices of sample inputs under a definition (sent, or the one in force)',
        params: param,
        body: definitionBodies.preview,
        ok: env(Priced, 'One answer per sample'),
      },
      async (s, call) => {
        const body = parseWith(definitionBodies.preview, call.body, '');
        const id = modelId(call);
        const model = body.definition ? s.definitions.check(id, body.definition) : (await s.definitions.refresh(), s.definitions.catalog.find(id));
        if (!model) return data(Promise.reject(new AppError('not_found', `model ${JSON.stringify(id)} is not in the catalog; send a definition to price`)));
        return data({ samples: priceSamples(model, body.samples) });
      },
    ),
    op(
      {
        method: 'post',
        path: '/admin/v1/definitions/:id/retire',
        id: 'adminRetireDefinition',
        summary: 'Retire a model: it takes no new tasks (400 naming it); its tasks stay readable',
        params: param,
        body: definitionBodies.retire,
        ok: env(Detail, 'The definition with its new version'),
        errors: ['invalid_request', 'not_found', 'conflict'],
      },
      (s, call) => data(s.definitions.retire(modelId(call), who(call), changeOpts(parseWith(definitionBodies.retire, call.body, '')))),
    ),
    op(
      {
        method: 'post',
        path: '/admin/v1/definitions/:id/restore',
        id: 'adminRestoreDefinition',
        summary: 'Put a retired model back, or an earlier version back in force, as a new version',
        params: param,
        body: definitionBodies.restore,
        ok: env(Detail, 'The definition with its new version'),
        errors: ['invalid_request', 'not_found', 'conflict'],
      },
      (s, call) => data(s.definitions.restore(modelId(call), who(call), changeOpts(parseWith(definitionBodies.restore, call.body, '')))),
    ),
  ];
}
