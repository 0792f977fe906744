import { z } from 'zod';
import type { CALCULATOR_PARAMS } from '../pricing/index.js';

/**
 * The calculator's parameters as GET /v1/pricing/calculate and the MCP tool calculate_price
 * document them (one schema for both); pricing/calculator.ts checks each against the model and
 * words the refusals.
 */
export const calculatorParams = z.object({
  model: z.string().describe('A model id or alias'),
  resolution: z.string().describe("A value of the model's resolution field").optional(),
  quality: z.enum(['auto', 'low', 'medium', 'high']).optional(),
  duration: z.union([z.string(), z.number().int()]).describe('Seconds, or "auto" / -1 for models with automatic length').optional(),
  generate_audio: z.boolean().optional(),
  reference_images: z.number().int().min(0).optional(),
  reference_video_seconds: z.number().min(0).describe('Total seconds of client-supplied video').optional(),
} satisfies Record<(typeof CALCULATOR_PARAMS)[number], z.ZodType>);
