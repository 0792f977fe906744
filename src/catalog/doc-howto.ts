import { NAMED_RULES } from './named-rules.js';
import type { Catalog } from './types.js';

/** The parts of docs/models.md about writing definitions: the how-to, and every use of the extension point (generated, so it cannot miss one). */

const HOWTO = `## Add a model in five minutes

Every model is a definition file: YAML (or JSON) checked against [docs/model-definition.schema.json](model-definition.schema.json) (decision 3300), which every server also serves at \`GET /model-definition.schema.json\` for editors. The shipped ones are in \`catalog/\`; copy the closest one, or draft one from an upstream's published schema with \`gengate models import\` (below). An operator's own files go in a folder named by \`GENGATE_MODELS\`: a file with a shipped id replaces that model, others are added. \`GENGATE_CATALOG\` still edits prices, switches, aliases and routes of any model on top.

1. Write \`models/my-model.yaml\`:

   \`\`\`yaml
   id: acme/text-to-image
   title: Acme Image
   kind: image              # image, video, audio, music or speech
   description: Text to image at 1K or 2K.
   inputs:
     prompt: { type: text, max: 4000, required: true, description: What the image shows. }
     resolution: { type: choice, values: [1K, 2K], default: 1K, description: Size class. }
     aspect_ratio: { type: choice, values: ['1:1', '16:9', '9:16'], default: '1:1', description: Aspect ratio. }
     seed: { type: integer, min: -1, max: 4294967295, default: -1, description: -1 is random., advanced: true }
   price:
     unit: image            # run, image, second (of the result) or characters (per: {field, block})
     by: resolution         # one enum field, or a list for a table: [resolution, duration]
     rates: { 1K: "0.030", 2K: "0.045" }
   aliases:
     - name: acme-image-v1  # a plain alias; with input: {sent_name: field} it maps another API's names
   routes:
     - { backend: fal, model: acme/image, key_env: FAL_KEY }
     - { backend: local }
   \`\`\`

2. \`gengate models check models/\`: every problem is one line \`file:line: where: reason\`; a price that misses a valid value is refused (\`price.rates: has no rate for resolution "2K"\`).
3. Set \`GENGATE_MODELS=models/\` and restart; \`GET /api/v1/models\`, \`/v1/pricing\`, the calculator, the OpenAPI document and MCP show it at once. Or, without a restart, store it in the database with the CLI or the admin API (below).

### Without a restart: the CLI and the admin API

Definitions stored in the database lie on top of the files (decisions 3304-3307): a stored version of a model replaces its file's, or adds a model. Every change is a numbered version with who, when and what (create, edit, retire, restore); it applies at once in the process that made it and in every other process sharing the database within \`MODEL_SWITCH_CACHE_MS\` (2 s), without a restart. A definition with a problem is refused with every problem and the catalog in force stays as it was. A task keeps the definition version (\`tasks.model_version\`) and the price it was created with; a retired model takes no new tasks (400 \`unsupported_model\`, naming it and when it was retired) and its tasks stay readable.

\`\`\`sh
gengate models apply models/my-model.yaml --note "launch"   # a file or a folder; refused whole when any has a problem
gengate models list                                         # every model: file, database or both; stored version; retired
gengate models show acme/text-to-image                      # every version: when, what, who
gengate models retire acme/text-to-image --note "upstream gone"
gengate models restore acme/text-to-image                   # or --version N: an earlier version back in force
\`\`\`

The admin API does the same (bearer \`ADMIN_TOKEN\`, or an operator's console session; \`X-GenGate-Actor: NAME\` records who acts with the token):

\`\`\`sh
curl -X PUT $BASE/admin/v1/definitions/acme%2Ftext-to-image -H "Authorization: Bearer $ADMIN_TOKEN" \\
  -H 'Content-Type: application/json' -d '{"definition": {"title": "Acme Image", "kind": "image", ...}, "note": "launch", "expectVersion": 0}'
\`\`\`

\`GET /admin/v1/definitions\` (all), \`GET /admin/v1/definitions/ID\` (with every version and its definition), \`PUT /admin/v1/definitions/ID\` (\`{definition, note?, expectVersion?}\`: a new version; \`expectVersion\` answers 409 when someone changed it meanwhile), \`POST .../validate\` (\`{definition}\`: check only), \`POST .../preview\` (\`{definition?, samples: [{input, media?}]}\`: the price createTask would charge for each sample, or its refusal), \`POST .../retire\` and \`POST .../restore\` (\`{version?, note?}\`). A refusal is a 400 whose \`data.problems\` lists \`{where, line, why}\`. A stored definition replaces the whole model, \`GENGATE_CATALOG\`'s edits of it included; \`model disable\` switches still apply on top.

**Inputs.** \`text\` (max), \`choice\` (values, same: other spellings), \`integer\` (min, max, only, auto: "auto" and -1), \`number\` (min, max, step, auto), \`boolean\`, \`task\` (a draft's id), \`media\` (accepts image, video or audio; count {min, max} for a list; formats, link_formats, assets, upload_mb; seconds {each, total} and alone for clips). Every input has a description; \`required\`, \`default\` and the form hints \`label\`, \`help\`, \`group\` (of \`form.groups\`), \`advanced\`, \`visible_when\` are optional. Some names carry meaning the engine relies on: \`duration\` (seconds billed), \`resolution\` (draft flow), \`video_mode\`, \`first_frame_url\` and \`last_frame_url\` (frames), \`video_urls\` and \`audio_urls\` (the only clip lists: trimmed and billed by these names), \`trim_video_to\`, \`trim_to_duration\`, \`auto_trim\`, \`web_search\` (\`tools\`), \`aspect_ratio\` (\`size\`).

**Rules** (checked after every field, in order): \`{required: f, unless_given: [g], when: {h: value}, because: words}\`; \`{field: f, requires: [g]}\` (only together); \`{field: f, excludes: [g]}\` or \`excludes: {h: value}\`; \`{fields: [f], only_when: {h: value}}\` (a value equal to the default counts as not sent); \`{field: mode, needs: {edit: {one_of: [video_urls], noun: clip}}}\`; \`{named: NAME}\` for what data cannot say (below).

**Prices.** \`rate\` (flat) or \`by\` + \`rates\` (nested for several fields), \`same_as\` (a value priced as another), \`with_client_video\` (per-second rates when clips are supplied; their seconds are billed), \`per\` (quantity from a field), \`auto_length\` (seconds charged for duration "auto", the rest refunded), and \`draft\` (draft and final resolutions). Amounts are USD text; the price is rounded up to 0.001 USD.

**Routes.** Backends in order, as in the catalog file (docs/backends.md); \`optional: true\` on a kie, fal or replicate route leaves it out while the setting its \`key_env\` names is not set, so the model falls to the next route (the local demo) until the operator sets the credential (decision 3311).

**Other parts.** \`hints\` (words for refusals of names a client may send by mistake), \`demo\` (which inputs the local backend renders from), \`openai\` (how OpenAI's \`/v1/images\`, \`/v1/videos\` and \`/v1/audio/speech\` parameters map onto the inputs: a field, \`{to, values}\`, \`{set: {value: {field: value}}}\`, \`{ignore: [values]}\`, \`{instead: field}\`), \`enabled\`.
`;

const IMPORT = `## Import from an upstream

\`gengate models import\` drafts a definition from what an upstream publishes, so a model it offers is sellable in minutes (decision 3303):

\`\`\`sh
gengate models import fal:fal-ai/flux/dev --out models/                         # the endpoint's queue OpenAPI document; fal's listed price with FAL_KEY
gengate models import replicate:black-forest-labs/flux-schnell --out models/   # the latest version's openapi_schema (REPLICATE_API_TOKEN)
gengate models import kie:google/nano-banana-edit --out models/                # the OpenAPI document of kie.ai's documentation page of the model
\`\`\`

1. The draft (\`models/<id>.yaml\`, or standard output without \`--out\`) has the upstream's inputs under their own names and in the upstream's order (fal's \`x-fal-order-properties\`, Replicate's \`x-order\`, the page's order on kie.ai), with their descriptions, defaults, ranges and required fields: string → \`text\`, enum → \`choice\`, integer and number → \`integer\` / \`number\` with their minimum and maximum, boolean → \`boolean\`, links and lists of links → \`media\` (the kind guessed from the name or the description, and said so). It has one route to that upstream with \`as_is: true\` (the input goes as validated, under those names) and the credential by setting name (\`FAL_KEY\`, \`REPLICATE_API_TOKEN\`, \`KIE_API_KEY\`; \`--key-env\` names another).
2. Every price is \`SET-PRICE\`, with the upstream's listed cost in a comment beside it (fal's price per unit, and per row of a table over a duration choice; Replicate and kie.ai publish no price in their APIs, and the comment says where to look). A definition holding \`SET-PRICE\` is refused by \`models check\` and at start, so nothing is sold at a price nobody chose.
3. Read the \`TODO\` notes (guessed kinds, limits the upstream does not state, inputs left out), set the prices, run \`gengate models check models/\`, then set \`GENGATE_MODELS=models/\` as above.

What a draft leaves out, and why: inputs a definition cannot take (lists of objects such as LoRA weights, objects, lists of texts) are listed in a comment, and the import fails when the upstream requires one; fields that ask for several outputs (\`num_images\`, \`num_outputs\`, ...) are sent as 1 by the route's \`map\`, as GenGate delivers one file per task; fal's \`sync_mode\` is left at fal's default. A list of clips becomes \`video_urls\` / \`audio_urls\` (the engine checks, trims and bills clips by those names) and the route's \`map\` renames it back; a single clip link stays a text passed on unchecked. Options: \`--id\` (the id in GenGate; a shipped model's name only on purpose), \`--kind\`, \`--out FILE|FOLDER\` (\`--force\` replaces a file), \`--doc FILE|URL\` (a saved copy of the document, or kie.ai's page of a model whose page is not \`docs.kie.ai/market/<id>.md\`; https://docs.kie.ai/llms.txt lists them), \`--base-url\` and \`--pricing-url\` (other addresses, e.g. a proxy). An unreachable upstream or a malformed schema fails with one line naming what was read and where, and nothing is written.
`;

/** The how-to and the extension point with every model that uses each named rule. */
export function howtoSections(catalog: Catalog): string[] {
  const uses = [...NAMED_RULES].map(([name, rule]) => {
    const models = catalog.models.filter((m) => m.rules.includes(rule)).map((m) => `\`${m.id}\``);
    return `| \`${name}\` | ${models.join(', ') || '(none)'} | ${rule.fields.map((f) => `\`${f}\``).join(', ')} | ${rule.why} |`;
  });
  return [
    HOWTO,
    IMPORT,
    '## Extension points',
    '',
    'A rule that data cannot say is written in code under a name (`src/catalog/named-rules.ts`) and used from a definition as `{named: NAME}` (decision 3301). Every one, and every model that uses it:',
    '',
    '| Named rule | Used by | Reads | Why it is code |',
    '|---|---|---|---|',
    ...uses,
    '',
  ];
}
