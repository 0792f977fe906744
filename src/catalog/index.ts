/** The model catalog: model data, input validation, media checks, overrides and client views. */
export type {
  Catalog,
  ClipLimits,
  DraftRules,
  FieldDef,
  InputMap,
  InputRename,
  ImageLimits,
  MediaFact,
  MediaFacts,
  MediaKind,
  MediaLimits,
  ModelDef,
  ModelKind,
  PriceRule,
  PriceUnit,
  DemoRecipe,
  DemoRole,
  FormHints,
  FieldForm,
  OpenAiMaps,
  OpenAiRule,
  Route,
  Where,
} from './types.js';
export { buildCatalog, loadCatalog, BACKEND_KINDS } from './overrides.js';
export { routeName, privateRouteHosts, configuredRoutes, KEY_ENV } from './routes.js';
export { routeLimitRefusal, routeLimitsOf } from './route-limits.js';
export { hasInputMapping, makeCatalog, modelNames } from './catalog.js';
export { DEFAULT_MODELS, DEFAULT_CATALOG_DIR, KIE_MARKET_DIR, KIE_ALIASES, KIE_JPG_IDS, type KieAlias } from './defaults.js';
export { KIE_SUNO, KIE_SUNO_FIELDS, KIE_SUNO_VERSIONS, withKieSuno } from './kie-suno.js';
export { validateInput, checkMedia, findModel, type ValidatedInput } from './validate.js';
export { resolveDraftFinal, type DraftTask } from './draft.js';
export { notAnUpload, EDIT_MIN_SECONDS, type ClipPlan, type MediaCheck } from './media.js';
export type { LinkOptions } from './links.js';
export { numberFrom, boolFrom, characterCount, exactDecimal, roundHalfUp, type Decimal } from './coerce.js';
export { PRICE_KEY_JOIN, OUTPUT_OF_KIND } from './types.js';
export {
  amount,
  limitsOf,
  normalisedSchema,
  parametersSchema,
  priceDisplay,
  priceRules,
  priceTiers,
  usdText,
  type Amount,
  type PriceTier,
} from './describe.js';
export { modelEntry, type ModelEntry } from './entry.js';
export { ModelSwitches, type ModelSwitchView } from './switches.js';
export { LiveCatalog, type DefinitionView, type DefinitionDetail } from './live.js';
export { refusal as definitionRefusal, type DefinitionVersion, type DefinitionAction } from './stored.js';
export { refuseRetired } from './validate.js';
export { readDefinition, readDefinitions, definitionFiles, problemText, DefinitionError, type DefinitionProblem } from './definitions.js';
export { definitionJsonSchema, type Definition } from './format.js';
export { NAMED_RULES, type NamedRule } from './named-rules.js';
export { DEMO_DEFAULTS } from './compile.js';
export { PRICE_PLACEHOLDER } from './compile-price.js';
export { importModel, ImportError, IMPORT_SOURCES, type ImportRequest, type ImportResult } from './import/index.js';
