import type { z } from 'zod';
import type { LinkOptions } from './links.js';

export type ModelKind = 'image' | 'video' | 'audio' | 'music' | 'speech';
export type MediaKind = 'image' | 'video' | 'audio';

/** Where a value sits, for refusal messages: the path as the client wrote it and the model id. */
export interface Where {
  path: string;
  model: string;
  /** Settings of the running service that link checks need (the upload address). */
  links?: LinkOptions;
}

/** One input field: how a sent value is read, its default, and its zod schema (of the normalised value). */
export interface FieldDef {
  /** The phrase after "must be" that names the allowed values, e.g. `one of "480p", "720p"`. */
  readonly allowed: string;
  /** Reads a sent value (never null/empty) into its normalised form, or throws an AppError naming the field. */
  read(value: unknown, where: Where): unknown;
  /** Filled in when the field is not sent. */
  readonly default?: unknown;
  /** Schema of the normalised value; drives the JSON Schema of `/models` and docs/models.md. */
  readonly schema: z.ZodType;
  readonly description: string;
}

/** Limits of a kind of reference clip (video or audio). */
export interface ClipLimits {
  readonly max: number;
  readonly totalSeconds: number;
  /** Per-clip length range; audio has none beyond the total. */
  readonly clipSeconds?: { readonly min: number; readonly max: number };
  readonly formats: readonly string[];
  readonly uploadMb: number;
}

/** Limits of reference photos. */
export interface ImageLimits {
  /** The input field holding the photo links (`image_urls` on video models, `image_input` on image models). */
  readonly field: string;
  readonly min: number;
  readonly max: number;
  /** Formats of upload links; public https links may also use `linkFormats`. */
  readonly formats: readonly string[];
  readonly linkFormats: readonly string[];
  /** Whether `asset://` identifiers are accepted. */
  readonly assets: boolean;
  readonly uploadMb: number;
}

export interface MediaLimits {
  readonly images?: ImageLimits;
  /** Whether first_frame_url / last_frame_url exist. */
  readonly frames?: boolean;
  readonly videos?: ClipLimits;
  /** `alone`: audio without any photo or video is allowed. */
  readonly audios?: ClipLimits & { readonly alone: boolean };
}

/** What one rate buys: a run, an image, a second of the result, or `per.block` characters of a text input. */
export type PriceUnit = 'second' | 'image' | 'run' | 'characters';

/** Joins the values of a table over several fields into one rate key (`720p|10`). */
export const PRICE_KEY_JOIN = '|';

/**
 * How a model is priced. Rates are integer micro-USD per unit, keyed by the value of the input field
 * `by` ('*' when flat); a table over several fields (`table`, whose first is `by`) keys them by the
 * values joined with PRICE_KEY_JOIN. `withVideo` are the per-second rates when the client supplies video.
 */
export interface PriceRule {
  readonly unit: PriceUnit;
  readonly by?: string;
  /** Every field of a table over more than one field, in key order. */
  readonly table?: readonly string[];
  readonly rates: Readonly<Record<string, number>>;
  readonly withVideo?: Readonly<Record<string, number>>;
  /** Values priced like another value (quality `auto` is priced as `medium`). */
  readonly sameAs?: Readonly<Record<string, string>>;
  /** The quantity comes from an input field: its number (image, run) or its characters (characters), per `block`. */
  readonly per?: { readonly field: string; readonly block: number };
}

/** Draft flow settings of a model that has `draft` / `draft_task_id`. */
export interface DraftRules {
  readonly resolution: string;
  readonly finalResolution: string;
  readonly keepDays: number;
  /** The only fields a draft final may send besides draft_task_id. */
  readonly finalMayChange: readonly string[];
}

/**
 * Which generation backend renders a model; the first route is tried first and the next ones
 * take over when it does not accept the task (DECISIONS §16, docs/backends.md). Only the
 * backend kind is set for `local`; upstream kinds name their credential by setting, never by value.
 */
export interface Route {
  /** Backend kind: local, same-api, byteplus, fal, replicate, kie, comfyui. */
  readonly backend: string;
  /** Name for logs, metrics and the task row; unique in the catalog (default `<kind>:<model id>#<position>`). */
  readonly name?: string;
  /** The upstream's model id / endpoint / version (same-api: defaults to our model id). */
  readonly model?: string;
  /** API base of the upstream (provider default when absent; required for same-api). */
  readonly baseUrl?: string;
  /** Name of the setting (environment variable) holding the credential. */
  readonly keyEnv?: string;
  /** Per-route input mapping, interpreted by the backend kind (docs/backends.md). */
  readonly map?: Readonly<Record<string, unknown>>;
  /** Tasks this route may have handed off at once (all processes together); unlimited when absent. */
  readonly concurrency?: number;
  /** kie only: the address of kie.ai's upload host (its default when absent). */
  readonly uploadUrl?: string;
  /** kie only: below this many kie.ai credits left on the account the route is skipped (docs/backends.md). */
  readonly minCredit?: number;
  /** comfyui: the ComfyUI base URLs that share the route's tasks. */
  readonly servers?: readonly string[];
  /** comfyui: the workflow file (API format), relative to the catalog file. */
  readonly workflow?: string;
  /** comfyui: frames per second of the workflow's video (for `{{frames}}` and `{{fps}}`). */
  readonly fps?: number;
  /**
   * fal, replicate and kie: send the model's validated input under its own names, as it is (`map`
   * still applies) instead of the adapter's mapping of GenGate's names; for models whose inputs are
   * the upstream's own, as `gengate models import` drafts them (decision 3303).
   */
  readonly asIs?: boolean;
  /** Left out of the catalog in use while the setting `keyEnv` names is not set (the shipped kie.ai market, decision 3311). */
  readonly optional?: boolean;
  /**
   * The route's own hosts (`base_url`, `upload_url`, `servers`) may be on loopback or private
   * addresses, with ALLOW_PRIVATE_NETWORK off (a ComfyUI on the LAN); customers' links stay under
   * the network guard (decision 2502).
   */
  readonly privateNetwork?: boolean;
  /** Inputs this route's upstream refuses although the model accepts them (decision 2503); checked at createTask. */
  readonly limits?: readonly RouteLimit[];
}

/** One input limit of an upstream (src/catalog/route-limits.ts): while `when` holds, `required` fields must be given and `maxLength` fields be no longer. */
export interface RouteLimit {
  /** Field → values (normalised input); holds when every field has one of them. Absent: always. */
  readonly when?: Readonly<Record<string, readonly unknown[]>>;
  readonly maxLength?: Readonly<Record<string, number>>;
  readonly required?: readonly string[];
  /** The upstream's name as the refusal shows it, e.g. "kie.ai's Suno API". */
  readonly upstream?: string;
}

/** What cross-field rules see: the model, which fields the client actually sent, and a path maker. */
export interface RuleContext {
  readonly model: ModelDef;
  readonly sent: ReadonlySet<string>;
  /** The path of a field as the client wrote it (an alias stays an alias). */
  where(field: string): Where;
}

/** A rule over the normalised input that throws an AppError when fields do not go together; `note` says it in words for docs. */
export interface Rule {
  readonly note: string;
  check(input: Record<string, unknown>, ctx: RuleContext): void;
}

/**
 * How one input name sent under an alias reaches the model's fields (KIE.md §2, DECISIONS §18;
 * docs/decisions/0400): a field name renames it; `to` with `values` also maps values; `to` with
 * a list spreads a list over fields in order (first and last frame); `ignore` accepts and checks
 * it but passes nothing on; `instead` refuses it, naming the field GenGate prices instead.
 */
export type InputRename =
  | string
  | { readonly to: string; readonly values?: Readonly<Record<string, string>> }
  | { readonly to: readonly string[] }
  | { readonly ignore: 'boolean' | readonly string[] }
  | { readonly instead: string };

/** An alias's input mapping: sent name → how it reaches the model's fields. */
export type InputMap = Readonly<Record<string, InputRename>>;

/** One model of the catalog: everything validation, pricing, docs and routing need. */
export interface ModelDef {
  readonly id: string;
  readonly aliases: readonly string[];
  /** Input mappings of names (an alias, or the id when a kie.ai id equals it), applied before validation; empty for most models. */
  readonly inputMaps: ReadonlyMap<string, InputMap>;
  readonly kind: ModelKind;
  readonly title: string;
  readonly summary: string;
  /** Input fields in documentation order. */
  readonly fields: ReadonlyMap<string, FieldDef>;
  readonly rules: readonly Rule[];
  readonly media: MediaLimits;
  readonly price: PriceRule;
  /** Seconds charged at creation when `duration` is automatic; absent when the model has no automatic length. */
  readonly autoLengthSeconds?: number;
  readonly draft?: DraftRules;
  /** Extra words for refusals of unknown fields, e.g. where to put a photo instead. */
  readonly hints: Readonly<Record<string, string>>;
  readonly enabled: boolean;
  readonly routes: readonly Route[];
  /** Input limits of the upstreams of a backend kind, for every route of that kind without its own `limits` (definition `route_limits`, decision 2503). */
  readonly routeLimits?: Readonly<Record<string, readonly RouteLimit[]>>;
  /** Presentation hints for forms (the console playground); absent for models made in code. */
  readonly form?: FormHints;
  /** What the local demo backend renders for this model. */
  readonly demo?: DemoRecipe;
  /** How OpenAI's media parameters map onto the inputs (issue 34), per endpoint family. */
  readonly openai?: OpenAiMaps;
  /** The definition file the model was compiled from. */
  readonly source?: string;
  /** The stored definition version in force (decision 3304); absent for a definition file's model. */
  readonly version?: number;
  /** Set when the operator retired the model: it takes no new tasks, its tasks stay readable (decision 3306). */
  readonly retired?: { readonly at: number; readonly by: string; readonly version: number };
}

/** Hints for one field in forms; none of them changes validation. */
export interface FieldForm {
  readonly label?: string;
  readonly help?: string;
  readonly group?: string;
  readonly advanced?: boolean;
  /** Shown only while every named field has one of its values (normalised). */
  readonly visibleWhen?: Readonly<Record<string, readonly unknown[]>>;
}

export interface FormHints {
  readonly groups: readonly { readonly id: string; readonly label: string; readonly advanced: boolean }[];
  readonly fields: ReadonlyMap<string, FieldForm>;
}

/** The inputs the local demo backend renders from, by role; it renders a result of the model's kind (OUTPUT_OF_KIND). */
export type DemoRole = 'prompt' | 'seconds' | 'size' | 'aspect' | 'format' | 'sound' | 'lastFrame';
export type DemoRecipe = Readonly<Partial<Record<DemoRole, string>>>;

/**
 * One OpenAI parameter → the model's inputs: a field (same value), `{to, values}` (a value map),
 * `{set}` (each OpenAI value sets some fields), `{ignore}` (accepted values that change nothing),
 * `{instead}` (refused, naming the field that does it here).
 */
export type OpenAiRule =
  | string
  | { readonly to: string; readonly values?: Readonly<Record<string, unknown>> }
  | { readonly set: Readonly<Record<string, Readonly<Record<string, unknown>>>> }
  | { readonly ignore: readonly string[] }
  | { readonly instead: string };

export interface OpenAiMaps {
  readonly images?: Readonly<Record<string, OpenAiRule>>;
  readonly videos?: Readonly<Record<string, OpenAiRule>>;
  readonly speech?: Readonly<Record<string, OpenAiRule>>;
}

/** The catalog in use: the default models with the operator's overrides applied. */
export interface Catalog {
  /** The models that take tasks (retired ones are not listed). */
  readonly models: readonly ModelDef[];
  /** Finds a model by canonical id or alias; a retired model is found too (its tasks run on), with `retired` set. */
  find(name: string): ModelDef | undefined;
  /**
   * The immutable catalog in force now, for a live view whose models change while the process runs
   * (decision 3305): a request takes one and uses it throughout, so a reload never splits it.
   */
  snapshot?(): Catalog;
}

/**
 * Facts about one supplied media link, as the upload service knows them: its kind and format
 * (sniffed from the bytes) and, for video and audio, its whole seconds (DECISIONS §5). The
 * calculator passes fractional seconds.
 */
export interface MediaFact {
  readonly kind?: MediaKind;
  readonly format?: string;
  readonly seconds?: number;
}

/** Media facts keyed by the link exactly as it appears in the input. */
export type MediaFacts = Readonly<Record<string, MediaFact>>;

/** What one run of a model of each kind returns: the kind of its files, how many, and the MIME type assumed when an upstream names none. */
export const OUTPUT_OF_KIND: Readonly<Record<ModelKind, { readonly media: MediaKind; readonly files: number; readonly mime: string }>> = {
  image: { media: 'image', files: 1, mime: 'image/png' },
  video: { media: 'video', files: 1, mime: 'video/mp4' },
  audio: { media: 'audio', files: 1, mime: 'audio/mpeg' },
  music: { media: 'audio', files: 2, mime: 'audio/mpeg' },
  speech: { media: 'audio', files: 1, mime: 'audio/mpeg' },
};
