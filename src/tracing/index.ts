/**
 * OpenTelemetry traces (decision 2603): the hooks the request, the create transaction, the engine
 * step, the upstream calls and the callback deliveries call (cheap when off), the settings, and
 * startTracing, which loads the SDK only when OTEL_TRACES_EXPORTER=otlp.
 */
export { tracing } from './tracing.js';
export { tracingSettings } from './settings.js';
export { startTracing, otlpHeaders, type TracingHandle } from './start.js';
