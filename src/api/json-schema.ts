import { z } from 'zod';

/** The version of the machine-readable description (SPEC "Versioning"), shown by OpenAPI and the MCP server. */
export const API_DOC_VERSION = '1.0.0';

/** JSON Schema (2020-12, as OpenAPI 3.1 and MCP use) of a zod schema, as it accepts (`input`) or answers (`output`). */
export function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): Record<string, unknown> {
  const out = z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any' }) as Record<string, unknown>;
  delete out.$schema;
  return out;
}
