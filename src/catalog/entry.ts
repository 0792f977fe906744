import { inputMappings, limitsOf, parametersSchema, priceDisplay, priceRules, priceTiers, type PriceTier } from './describe.js';
import type { ModelDef } from './types.js';

/** One entry of `GET /api/v1/models`. */
export interface ModelEntry {
  id: string;
  aliases: readonly string[];
  /** Names (kie.ai ids, operator aliases) whose input names are mapped, with each mapping in words. */
  input_mappings: Record<string, string[]>;
  kind: ModelDef['kind'];
  title: string;
  description: string;
  enabled: boolean;
  /** JSON Schema of `input`. */
  parameters: Record<string, unknown>;
  pricing: {
    unit: ModelDef['price']['unit'];
    price_by: string | null;
    display: string;
    tiers: PriceTier[];
    rules: string[];
    calculator_url: string;
  };
  limits: Record<string, unknown>;
}

/** The catalog entry clients see; `pricingBaseUrl` is PRICING_BASE_URL. */
export function modelEntry(model: ModelDef, opts: { usdRubRate: number; pricingBaseUrl: string }): ModelEntry {
  return {
    id: model.id,
    aliases: model.aliases,
    input_mappings: inputMappings(model),
    kind: model.kind,
    title: model.title,
    description: model.summary,
    enabled: model.enabled,
    parameters: parametersSchema(model),
    pricing: {
      unit: model.price.unit,
      price_by: model.price.by ?? null,
      display: priceDisplay(model),
      tiers: priceTiers(model, opts.usdRubRate),
      rules: priceRules(model),
      calculator_url: `${opts.pricingBaseUrl}/v1/pricing/calculate?model=${encodeURIComponent(model.id)}`,
    },
    limits: limitsOf(model),
  };
}
