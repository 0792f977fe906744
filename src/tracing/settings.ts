import { z } from 'zod';

/**
 * The tracing settings (decision 2603), part of the configuration schema (src/config.ts). The names
 * are OpenTelemetry's own, but export is off unless OTEL_TRACES_EXPORTER=otlp: a GenGate that
 * nobody collects traces from pays nothing for them.
 */
export const tracingSettings = {
  OTEL_TRACES_EXPORTER: z.enum(['none', 'otlp']).default('none'),
  OTEL_EXPORTER_OTLP_ENDPOINT: z
    .string()
    .url()
    .refine((u) => /^https?:\/\//.test(u), 'must start with http:// or https://')
    .transform((u) => u.replace(/\/+$/, ''))
    .default('http://localhost:4318')
    .describe('the base URL of an OTLP/HTTP receiver, e.g. http://otel-collector:4318 (spans go to /v1/traces)'),
  OTEL_EXPORTER_OTLP_HEADERS: z
    .string()
    .regex(/^([^=,\s]+=[^,]*)(,[^=,\s]+=[^,]*)*$/, 'must be comma-separated name=value pairs, e.g. x-api-key=abc')
    .optional()
    .describe('comma-separated name=value pairs, e.g. x-api-key=abc'),
  OTEL_SERVICE_NAME: z.string().min(1).max(128).default('gengate'),
  // One request in ten starts a kept trace (and every request whose caller sent a sampled
  // traceparent): a trace for every request cost createTask 15-50 % of its throughput (decision 2603).
  OTEL_TRACES_SAMPLER_ARG: z.coerce.number().min(0).max(1).default(0.1).describe('a number from 0 to 1 (the share of new traces kept)'),
};
