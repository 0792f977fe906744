import { limitsOf, priceDisplay, priceRules } from './describe.js';
import { howtoSections } from './doc-howto.js';
import { mappingWords } from './mapping.js';
import { EDIT_MIN_SECONDS } from './media.js';
import type { Catalog, ModelDef } from './types.js';

/**
 * docs/models.md, generated from the catalog (`npm run docs:models`); a test fails when the
 * file is stale. Everything here is read from model data, so docs cannot drift from behaviour.
 */

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

function fieldTable(model: ModelDef): string[] {
  const rows = [...model.fields].map(([name, f]) => {
    const def = f.default === undefined ? '' : `\`${JSON.stringify(f.default)}\``;
    return `| \`${name}\` | ${cell(f.allowed)} | ${def} | ${cell(f.description)} |`;
  });
  return ['| Field | Accepts | Default | Meaning |', '|---|---|---|---|', ...rows];
}

function aliasLines(model: ModelDef): string[] {
  const out: string[] = [];
  if (model.fields.has('aspect_ratio')) out.push('`size` → `aspect_ratio`');
  if (model.fields.has('video_mode')) out.push('`omni_reference_task_type` → `video_mode`');
  if (model.fields.has('web_search')) out.push('`tools: [{"type": "web_search"}]` → `web_search: true`');
  return out;
}

/** The names whose input names are mapped (kie.ai ids, DECISIONS §18), each with its mapping. */
function mappingLines(model: ModelDef): string[] {
  if (model.inputMaps.size === 0) return [];
  const lines = [...model.inputMaps].map(([name, map]) => `- \`${name}\`: ${mappingWords(model, map).join('; ')}.`);
  return ['Input mappings (applied before validation, only under the name shown; refusals name the field as sent):', ...lines, ''];
}

function limitLines(model: ModelDef): string[] {
  const l = limitsOf(model) as Record<string, Record<string, unknown> | boolean>;
  const out: string[] = [];
  const img = model.media.images;
  if (img) {
    const extra = img.linkFormats.length ? `; public links also ${img.linkFormats.join(', ')}` : '';
    out.push(
      `- Photos (\`${img.field}\`): ${img.min > 0 ? `${img.min} to ${img.max}` : `up to ${img.max}`}; ${img.formats.join(', ')}${extra}${img.assets ? '; or `asset://` ids' : ''}; upload up to ${img.uploadMb} MB per file.`,
    );
  }
  if (l.frames) out.push('- Frames: `first_frame_url`' + (model.fields.has('last_frame_url') ? ', optional `last_frame_url`.' : '.'));
  const v = model.media.videos;
  if (v) {
    out.push(
      `- Videos (\`video_urls\`, uploads only): up to ${v.max}; total at most ${v.totalSeconds} s; each clip ${v.clipSeconds?.min} to ${v.clipSeconds?.max} s; ${v.formats.join(' or ')}; upload up to ${v.uploadMb} MB.`,
    );
  }
  const a = model.media.audios;
  if (a) {
    out.push(
      `- Audio (\`audio_urls\`, uploads only): up to ${a.max}; total at most ${a.totalSeconds} s; ${a.formats.join(', ')}; upload up to ${a.uploadMb} MB${a.alone ? '; audio alone (no photo or video) is allowed' : ''}.`,
    );
  }
  return out;
}

/** Rules enforced outside the rule list: the draft final's shape and the order of trimming. */
function flowNotes(model: ModelDef): string[] {
  const out: string[] = [];
  if (model.draft) {
    out.push(
      `draft_task_id (the id of a finished draft, kept ${model.draft.keepDays} days) may be sent only with ${model.draft.finalMayChange.join(', ')}; draft true and draft_task_id are mutually exclusive.`,
    );
  }
  if (model.fields.has('trim_video_to')) {
    out.push(
      'Clips are trimmed in this order: trim_video_to, trim_to_duration, per-clip checks, auto_trim (the longest clips lowered to one common whole length, never below 2 s), total checks. Trimming is free; the price uses the kept seconds.',
    );
  }
  if (model.fields.has('video_mode') && model.media.videos) out.push(`video_mode "edit" needs every clip to be at least ${EDIT_MIN_SECONDS} s.`);
  return out;
}

function section(model: ModelDef): string[] {
  const aliases = aliasLines(model);
  const limits = limitLines(model);
  return [
    `## \`${model.id}\` — ${model.title}`,
    '',
    model.summary,
    '',
    `- Kind: ${model.kind}${model.aliases.length ? `; also accepted as ${model.aliases.map((a) => `\`${a}\``).join(', ')}` : ''}`,
    `- Price: ${priceDisplay(model)}`,
    ...priceRules(model).map((r) => `  - ${r}`),
    '',
    ...fieldTable(model),
    '',
    ...(aliases.length ? [`Aliases: ${aliases.join('; ')}.`, ''] : []),
    ...mappingLines(model),
    ...(model.rules.length ? ['Rules:', ...[...model.rules.map((r) => r.note), ...flowNotes(model)].map((n) => `- ${n}`), ''] : []),
    ...(limits.length ? ['Media limits:', ...limits, ''] : []),
  ];
}

/** The models of catalog/kie/ (decision 3310): what ships, where its data comes from, how a task picks kie.ai or the demo. */
function marketSection(catalog: Catalog): string[] {
  const market = catalog.models.filter((m) => m.source?.includes('/catalog/kie/'));
  if (market.length === 0) return [];
  return [
    '## The kie.ai market',
    '',
    `${market.length} models of kie.ai's market ship in \`catalog/kie/\`, one file each, under kie.ai's model ids and input names and at kie.ai's list prices (decision 3310): ${market.map((m) => `\`${m.id}\``).join(', ')}. Each file's header names kie.ai's documentation page of the model and the list price with the date both were read; check https://kie.ai/pricing before selling and change a price with the catalog file (\`GENGATE_CATALOG\`) or a copy of the file (\`GENGATE_MODELS\`). The other families kie.ai clients use run on built-in models under their kie.ai ids (docs/kie.md lists them).`,
    '',
    "Routing (decision 3311): each market model's first route is `{backend: kie, model: <its id>, key_env: KIE_API_KEY, as_is: true, optional: true}`, then `{backend: local}`. With `KIE_API_KEY` set, tasks go to kie.ai with the input as validated, under kie.ai's names; without it the route is left out and tasks run on the local demo backend at the same price. A catalog file that gives a market model `routes` (another key, a proxy's `base_url`) replaces both.",
    '',
  ];
}

/** The whole of docs/models.md for a catalog. */
export function renderModelsDoc(catalog: Catalog): string {
  const overview = catalog.models.map(
    (m) =>
      `| [\`${m.id}\`](#${m.id.replace(/[^a-z0-9 -]/g, '')}--${m.title
        .toLowerCase()
        .replace(/[^a-z0-9 -]/g, '')
        .replace(/ /g, '-')}) | ${m.kind} | ${m.price.unit} | ${cell(priceDisplay(m))} |`,
  );
  return [
    '# Models',
    '',
    '<!-- Generated from catalog/ and src/catalog by `npm run docs:models`. Do not edit by hand; a test fails when this file is stale. -->',
    '',
    'Every model GenGate ships, with its input fields, defaults, rules, media limits and list prices, compiled from the definition files of `catalog/`. Operators add or replace models with their own definition files (`GENGATE_MODELS`, below), and change prices, disable models and add aliases (with input mappings) with a catalog file (`GENGATE_CATALOG`, see docs/backends.md); the kie.ai ids of the built-in models are aliases with input mappings by default (docs/decisions/0400), and the other kie.ai market models ship under their kie.ai ids (`catalog/kie/`, "The kie.ai market" below); `GET /api/v1/models` and `GET /v1/pricing` always show the prices in force.',
    '',
    'Common to all inputs: unknown fields are refused by name; `null`, `""` and blank text count as not sent; numbers may be sent as text and text values as numbers where the meaning is clear (`duration: 5` or `"5"`); `true`/`false` may be sent as text; choices match regardless of case.',
    '',
    ...howtoSections(catalog),
    ...marketSection(catalog),
    '## The shipped models',
    '',
    '| Model | Kind | Unit | Price (USD) |',
    '|---|---|---|---|',
    ...overview,
    '',
    ...catalog.models.flatMap(section),
  ].join('\n');
}
