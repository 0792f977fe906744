import { randomUUID } from 'node:crypto';
import { context, propagation, trace } from '@opentelemetry/api';
import type { Config } from '../config.js';
import { setTracingOn } from './tracing.js';

/** A started tracer provider: `shutdown` sends the spans still queued and turns tracing off. */
export interface TracingHandle {
  shutdown(): Promise<void>;
}

/** Parses OTEL_EXPORTER_OTLP_HEADERS (`a=1,b=2`, values may be %-encoded as OpenTelemetry allows). */
export function otlpHeaders(text: string | undefined): Record<string, string> {
  if (!text) return {};
  return Object.fromEntries(
    text.split(',').map((pair) => {
      const at = pair.indexOf('=');
      return [pair.slice(0, at).trim(), decodeURIComponent(pair.slice(at + 1).trim())];
    }),
  );
}

/**
 * Starts OpenTelemetry tracing when OTEL_TRACES_EXPORTER=otlp (decision 2603): spans are batched
 * and sent as OTLP/HTTP JSON to OTEL_EXPORTER_OTLP_ENDPOINT/v1/traces; the W3C `traceparent`
 * header is read from requests. The SDK is loaded only here, so a process with tracing off never
 * loads it. Returns null when off.
 */
export async function startTracing(config: Config, role: string): Promise<TracingHandle | null> {
  if (config.OTEL_TRACES_EXPORTER !== 'otlp') return null;
  const [
    { BasicTracerProvider, BatchSpanProcessor, ParentBasedSampler, TraceIdRatioBasedSampler },
    { OTLPTraceExporter },
    { resourceFromAttributes },
    { AsyncLocalStorageContextManager },
    { W3CTraceContextPropagator },
  ] = await Promise.all([
    import('@opentelemetry/sdk-trace-base'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/context-async-hooks'),
    import('@opentelemetry/core'),
  ]);
  const exporter = new OTLPTraceExporter({ url: `${config.OTEL_EXPORTER_OTLP_ENDPOINT}/v1/traces`, headers: otlpHeaders(config.OTEL_EXPORTER_OTLP_HEADERS) });
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': config.OTEL_SERVICE_NAME, 'service.instance.id': randomUUID(), 'gengate.role': role }),
    sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(config.OTEL_TRACES_SAMPLER_ARG) }),
    spanProcessors: [new BatchSpanProcessor(exporter)],
  });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  setTracingOn(true);
  return {
    shutdown: async () => {
      setTracingOn(false);
      await provider.shutdown().catch(() => {});
      trace.disable();
      propagation.disable();
      context.disable();
    },
  };
}
