import { context, propagation, trace, SpanKind, SpanStatusCode, TraceFlags, ROOT_CONTEXT, type Attributes, type Context, type Span } from '@opentelemetry/api';

/** A kept W3C traceparent: version 00, trace id, span id, flags. */
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** Whether a tracer provider was started (startTracing): every hook below is one test of it when off. */
let on = false;
const tracer = () => trace.getTracer('gengate');

/** What a W3C `traceparent` header reads from and writes to. */
type Carrier = Record<string, string | string[] | undefined>;

/** Marks a span failed with the error's message (never a stack: spans leave the process). */
function failed(span: Span, e: unknown): void {
  span.setStatus({ code: SpanStatusCode.ERROR, message: e instanceof Error ? e.message.slice(0, 300) : String(e).slice(0, 300) });
}

/**
 * GenGate's hooks into OpenTelemetry (decision 2603). Off (the default) each is a test of one flag
 * and a direct call; on, spans go to the provider that `startTracing` set up.
 */
export const tracing = {
  get on(): boolean {
    return on;
  },

  /** Runs `fn` in a span named `name`, a child of `parent` (else of the active span); the span ends with fn's outcome. */
  span<T>(name: string, attributes: Attributes, fn: () => Promise<T>, parent?: Context, kind: SpanKind = SpanKind.INTERNAL): Promise<T> {
    if (!on) return fn();
    return tracer().startActiveSpan(name, { attributes, kind }, parent ?? context.active(), async (span) => {
      try {
        return await fn();
      } catch (e) {
        failed(span, e);
        throw e;
      } finally {
        span.end();
      }
    });
  },

  /**
   * The active span's W3C `traceparent`, kept with a task so its engine steps and callbacks join the
   * request's trace (and are kept or dropped with it: the sampler follows the parent's flag), or null.
   */
  parentOfActive(): string | null {
    if (!on) return null;
    const ctx = trace.getSpanContext(context.active());
    return ctx ? `00-${ctx.traceId}-${ctx.spanId}-${ctx.traceFlags & TraceFlags.SAMPLED ? '01' : '00'}` : null;
  },

  /** The context a kept `traceparent` stands for (the root when none). */
  contextOf(traceparent: string | null | undefined): Context {
    if (!on || !traceparent) return ROOT_CONTEXT;
    const m = TRACEPARENT.exec(traceparent);
    return m ? trace.setSpanContext(ROOT_CONTEXT, { traceId: m[1]!, spanId: m[2]!, traceFlags: Number.parseInt(m[3]!, 16), isRemote: true }) : ROOT_CONTEXT;
  },

  /** Starts the span of one HTTP request, a child of the caller's `traceparent` header if it sent one. */
  startRequest(method: string, path: string, headers: Carrier): { span: Span; context: Context } {
    const parent = propagation.extract(ROOT_CONTEXT, headers);
    const span = tracer().startSpan(`${method}`, { kind: SpanKind.SERVER, attributes: { 'http.request.method': method, 'url.path': path } }, parent);
    return { span, context: trace.setSpan(parent, span) };
  },

  /** Ends a request's span with its route and status (a 5xx marks it failed). */
  endRequest(span: Span, method: string, route: string | undefined, status: number): void {
    span.updateName(route ? `${method} ${route}` : method);
    span.setAttributes({ 'http.response.status_code': status, ...(route ? { 'http.route': route } : {}) });
    if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    span.end();
  },

  /** The trace and span ids of the active span, for log lines (empty when off or outside a span). */
  logFields(): { traceId?: string; spanId?: string } {
    if (!on) return {};
    const ctx = trace.getSpanContext(context.active());
    return ctx ? { traceId: ctx.traceId, spanId: ctx.spanId } : {};
  },

  /** Runs `fn` with `ctx` active. */
  with<T>(ctx: Context, fn: () => T): T {
    return context.with(ctx, fn);
  },
};

/** Set by startTracing once its provider is registered (and back by its shutdown). */
export function setTracingOn(value: boolean): void {
  on = value;
}
