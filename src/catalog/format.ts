import { z } from 'zod';

/**
 * The model definition format (docs/decisions/3300): one model per YAML (or JSON) file, checked
 * against this schema, then compiled into the runtime ModelDef by compile.ts. The same zod schema
 * gives the published JSON Schema (docs/model-definition.schema.json, `definitionJsonSchema()`),
 * so the file format and its documentation cannot drift apart.
 */

/** Input field names and the names of the flow fields: letters, digits and _. */
const FIELD = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/, 'must be a field name of letters, digits and _ (at most 64)');
/** Model ids and aliases, as the catalog file's aliases are. */
export const MODEL_NAME = /^[A-Za-z0-9][A-Za-z0-9._:/-]{0,99}$/;
const NAME = z.string().regex(MODEL_NAME, 'must be a name of letters, digits and . _ : / - (at most 100)');
/** A USD amount as text ("0.125"); numbers are taken too. Parsed exactly by the compiler. */
const USD = z.union([z.string(), z.number()]).describe('A USD amount such as "0.125" (text keeps it exact).');
const WORDS = (max: number) => z.string().min(1).max(max);
const SCALAR = z.union([z.string(), z.number(), z.boolean()]);

/** A condition: every named field's normalised value equals the value (or one of the list). */
const CONDITION = z
  .record(FIELD, z.union([SCALAR, z.array(SCALAR).min(1)]))
  .describe('Field → value (or list of values); holds when every field has one of its values.');

/** Presentation hints for forms (the console playground); never change validation. */
const FORM_HINTS = {
  label: WORDS(80).optional().describe('Label of the field in forms (the field name when absent).'),
  help: WORDS(500).optional().describe('Help text under the field (the description when absent).'),
  group: FIELD.optional().describe('Id of a group of `form.groups`.'),
  advanced: z.boolean().optional().describe('Shown collapsed under "Advanced".'),
  visible_when: CONDITION.optional().describe('Shown only while this condition holds.'),
};

const COMMON = {
  description: WORDS(2000).describe('What the field means; shown in /models, docs/models.md and the OpenAPI document.'),
  required: z.boolean().optional().describe('Must be sent (a rule "X is required.").'),
  ...FORM_HINTS,
};

const TEXT = z.strictObject({ type: z.literal('text'), max: z.int().min(1).max(1_000_000), ...COMMON });
const CHOICE = z.strictObject({
  type: z.literal('choice'),
  values: z.array(z.string().min(1).max(200)).min(1).max(500).describe('Allowed values (text; quote numbers), matched regardless of case.'),
  default: z.string().optional(),
  same: z.record(z.string(), z.string()).optional().describe('Other spellings taken as one of the values, e.g. {jpg: jpeg}.'),
  ...COMMON,
});
const INTEGER = z.strictObject({
  type: z.literal('integer'),
  min: z.int(),
  max: z.int(),
  only: z.array(z.int()).min(1).optional().describe('Only these values (within min..max).'),
  auto: z.boolean().optional().describe('"auto" and -1 mean automatic (normalised to "auto").'),
  default: z.int().optional(),
  ...COMMON,
});
const NUMBER = z.strictObject({
  type: z.literal('number'),
  min: z.number(),
  max: z.number(),
  step: z.number().positive().optional().describe('Values are min + a whole number of steps (exact decimals).'),
  auto: z.boolean().optional().describe('The text "auto" is accepted too.'),
  default: z.number().optional(),
  ...COMMON,
});
const BOOLEAN = z.strictObject({ type: z.literal('boolean'), default: z.boolean().optional(), ...COMMON });
const TASK = z.strictObject({ type: z.literal('task'), ...COMMON }).describe('The id of another task (a draft).');
const SECONDS = z.strictObject({
  each: z
    .strictObject({ min: z.number().min(0), max: z.number().positive() })
    .optional()
    .describe('Length of each clip.'),
  total: z.number().positive().describe('Length of all clips together.'),
});
const MEDIA = z.strictObject({
  type: z.literal('media'),
  accepts: z.enum(['image', 'video', 'audio']),
  count: z
    .strictObject({ min: z.int().min(0).optional(), max: z.int().min(1).max(100) })
    .optional()
    .describe('A list of links; absent: a single link.'),
  formats: z.array(z.string().min(1).max(10)).min(1).optional().describe('Formats of uploads (default: what the upload service stores for the kind).'),
  link_formats: z.array(z.string().min(1).max(10)).optional().describe('Extra formats a public https photo link may have.'),
  assets: z.boolean().optional().describe('asset:// ids accepted.'),
  upload_mb: z.int().min(1).max(10_000).optional().describe('Upload size limit per file (default 30 for photos, 200 for clips).'),
  seconds: SECONDS.optional().describe('Video and audio lists: clip lengths.'),
  alone: z.boolean().optional().describe('Audio lists: audio without any photo or video is allowed.'),
  ...COMMON,
});

export const FIELD_SCHEMA = z.discriminatedUnion('type', [TEXT, CHOICE, INTEGER, NUMBER, BOOLEAN, TASK, MEDIA]);

/** Cross-field rules as data; `named` is the extension point (src/catalog/named-rules.ts). */
const RULE = z.union([
  z.strictObject({
    required: FIELD,
    unless_given: z.array(FIELD).min(1).optional().describe('Not required when any of these is given.'),
    when: CONDITION.optional().describe('Required only while this holds.'),
    because: WORDS(200).optional().describe('Words in brackets after the model id in the refusal.'),
    note: WORDS(1000).optional(),
  }),
  z.strictObject({
    field: FIELD,
    requires: z.array(FIELD).min(1).describe('Accepted only together with all of these.'),
    got: WORDS(200).optional().describe('What the refusal says was sent.'),
    note: WORDS(1000).optional(),
  }),
  z.strictObject({
    field: FIELD,
    excludes: z.union([z.array(FIELD).min(1), CONDITION]).describe('Not together with these fields, or not while this holds.'),
    note: WORDS(1000).optional(),
  }),
  z.strictObject({
    fields: z.array(FIELD).min(1),
    only_when: CONDITION.describe('These fields apply only while this holds (a value equal to the default counts as not sent).'),
    note: WORDS(1000).optional(),
  }),
  z.strictObject({
    field: FIELD,
    needs: z
      .record(z.string(), z.strictObject({ one_of: z.array(FIELD).min(1), noun: WORDS(40) }))
      .describe('Value → at least one of these fields must be given, e.g. {edit: {one_of: [video_urls], noun: clip}}.'),
    note: WORDS(1000).optional(),
  }),
  z.strictObject({ named: z.string().min(1).max(64).describe('A rule of the named-rule registry (docs/models.md "Extension points").') }),
]);

/** Rates: a USD amount per value of `by` (nested maps for a table over several fields). */
const RATES: z.ZodType = z.lazy(() => z.record(z.string(), z.union([USD, RATES])));
const PRICE = z.strictObject({
  unit: z.enum(['run', 'image', 'second', 'characters']).describe('What one rate buys.'),
  rate: USD.optional().describe('One flat rate (instead of `by` and `rates`).'),
  by: z
    .union([FIELD, z.array(FIELD).min(1).max(4)])
    .optional()
    .describe('Enum field(s) the rate depends on.'),
  rates: RATES.optional(),
  same_as: z.record(z.string(), z.string()).optional().describe('Values priced like another value, e.g. {auto: medium}.'),
  with_client_video: RATES.optional().describe('second: per-second rates when the client supplies video_urls; their seconds are billed too.'),
  per: z
    .strictObject({ field: FIELD, block: z.union([z.literal(1), z.literal(10), z.literal(100), z.literal(1000), z.literal(1_000_000)]).optional() })
    .optional()
    .describe('Quantity from a field: its number, or (unit characters) its characters, per block.'),
  auto_length: z
    .int()
    .min(1)
    .optional()
    .describe('second: seconds charged at creation for duration "auto" (default: the duration maximum); the rest is refunded.'),
});

const DRAFT = z.strictObject({
  resolution: z.string().describe('Resolution a draft renders and is billed at.'),
  final_resolution: z.string(),
  keep_days: z.int().min(1).max(365),
  final_may_change: z.array(FIELD).describe('The only fields a draft final may send besides draft_task_id.'),
});

/** An OpenAI parameter → the model's inputs (issue 34): a field, {to, values}, {set}, {ignore} or {instead}. */
const OPENAI_RULE = z.union([
  FIELD,
  z.strictObject({ to: FIELD, values: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).optional() }),
  z.strictObject({ set: z.record(z.string(), z.record(FIELD, z.union([z.string(), z.number(), z.boolean()]))) }),
  z.strictObject({ ignore: z.array(z.string()).min(1) }),
  z.strictObject({ instead: FIELD }),
]);
const OPENAI = z.strictObject({
  images: z
    .record(z.string(), OPENAI_RULE)
    .optional()
    .describe('/v1/images/generations and /edits parameters (size, quality, output_format, background, image...).'),
  videos: z.record(z.string(), OPENAI_RULE).optional().describe('/v1/videos parameters (seconds, size, input_reference...).'),
  speech: z.record(z.string(), OPENAI_RULE).optional().describe('/v1/audio/speech parameters (input, voice, speed...).'),
});

const ALIAS = z.union([
  NAME,
  z.strictObject({
    name: NAME,
    dialect: z.enum(['kie']).optional().describe('Whose id it is: a kie route sends this id and reads the mapping backwards.'),
    input: z.record(z.string(), z.unknown()).optional().describe('Input mapping (docs/decisions/0400).'),
    upstream_values: z
      .record(FIELD, z.record(z.string(), z.string()))
      .optional()
      .describe('Values the upstream spells its own way, e.g. {output_format: {jpeg: jpg}}.'),
  }),
]);

/** A route as in the catalog file (docs/backends.md); `limits` and `cost` are read by the route's upstream (issue 36). */
const ROUTE = z.looseObject({ backend: z.string() });

/** An input limit of an upstream (decision 2503): while `when` holds, `required` fields must be given and `max_length` fields be no longer. */
const ROUTE_LIMIT = z.strictObject({
  when: CONDITION.optional(),
  max_length: z.record(FIELD, z.int().min(0).max(10_000_000)).optional().describe('Field → most characters.'),
  required: z.array(FIELD).min(1).optional(),
  upstream: WORDS(100).optional().describe('The upstream as the refusal names it, e.g. "kie.ai\'s Suno API".'),
});

/** Which inputs drive the local demo render (each defaults to the field of that name when the model has it). */
const DEMO = z.strictObject({
  prompt: FIELD.optional().describe('Text drawn into the result (default prompt).'),
  seconds: FIELD.optional().describe('Length of a video or audio result (default duration).'),
  size: FIELD.optional().describe('Resolution or size class (default resolution).'),
  aspect: FIELD.optional().describe('Aspect ratio (default aspect_ratio).'),
  format: FIELD.optional().describe('File format (default output_format).'),
  sound: FIELD.optional().describe('Whether a video has sound (default generate_audio).'),
  last_frame: FIELD.optional().describe('Whether the last frame is returned too (default return_last_frame).'),
});

export const DEFINITION_SCHEMA = z.strictObject({
  $schema: z.string().optional(),
  id: NAME,
  title: WORDS(120),
  kind: z.enum(['image', 'video', 'audio', 'music', 'speech']),
  description: WORDS(2000),
  enabled: z.boolean().optional(),
  aliases: z.array(ALIAS).optional(),
  inputs: z.record(FIELD, FIELD_SCHEMA).describe('Input fields in form and documentation order.'),
  rules: z.array(RULE).optional(),
  price: PRICE,
  draft: DRAFT.optional().describe('The draft flow: needs boolean `draft` and task `draft_task_id` inputs.'),
  hints: z.record(z.string(), WORDS(300)).optional().describe('Extra words for refusals of unknown fields.'),
  form: z.strictObject({ groups: z.array(z.strictObject({ id: FIELD, label: WORDS(80), advanced: z.boolean().optional() })).optional() }).optional(),
  demo: DEMO.optional().describe("What the local demo backend reads to render a result of the model's kind."),
  openai: OPENAI.optional(),
  routes: z.array(ROUTE).min(1).max(10).optional().describe('Backends in order (default [{backend: local}]).'),
  route_limits: z
    .record(z.string(), z.array(ROUTE_LIMIT).min(1).max(50))
    .optional()
    .describe(
      'Backend kind → inputs its upstreams refuse although the model accepts them; for every route of that kind without its own `limits` (decision 2503).',
    ),
});

export type Definition = z.infer<typeof DEFINITION_SCHEMA>;
export type FieldSpec = z.infer<typeof FIELD_SCHEMA>;
export type RuleSpec = NonNullable<Definition['rules']>[number];
export type PriceSpec = Definition['price'];
export type OpenAiRule = z.infer<typeof OPENAI_RULE>;
export type Condition = z.infer<typeof CONDITION>;

/** The published JSON Schema of a definition file (served at a stable URL by a later change). */
export function definitionJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(DEFINITION_SCHEMA, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    title: 'GenGate model definition',
    description: 'One model of the GenGate catalog (docs/models.md "Add a model in five minutes", docs/decisions/3300).',
    ...schema,
  };
}
