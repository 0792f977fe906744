import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/** Who may read a route's answers from a web page: any origin (public), or the origins of CORS_ORIGINS (keyed). */
export type CorsKind = 'public' | 'keyed';

declare module 'fastify' {
  interface FastifyContextConfig {
    cors?: CorsKind;
  }
}

/** Request headers a page may send: the key, JSON bodies, idempotency and request ids, revalidation. */
const ALLOW_HEADERS = { keyed: 'authorization, content-type, idempotency-key, x-request-id', public: 'if-none-match, x-request-id' } as const;
/** Answer headers a page may read besides the safelisted ones. */
const EXPOSE_HEADERS = 'x-request-id, etag, retry-after, ratelimit-limit, ratelimit-remaining, ratelimit-reset';
/** How long a browser may keep a preflight answer (seconds). */
const PREFLIGHT_MAX_AGE = '600';

/**
 * CORS without hooks: `answer` is called where Fastify calls in for every request anyway (the
 * request log's incomingRequest), and only for requests that carry an Origin header, so calls
 * from servers and scripts pay one property read. Public routes also send `*` without an Origin
 * (see limitPublic): a shared cache may then serve that answer to a page.
 */
export class Cors {
  private readonly origins: ReadonlySet<string>;

  constructor(origins: readonly string[]) {
    this.origins = new Set(origins.map((o) => o.toLowerCase()));
  }

  /** Sets the CORS headers of an answer to a request from `origin`, per its route's `config.cors`. */
  answer(req: FastifyRequest, reply: FastifyReply, origin: string): void {
    const kind = req.routeOptions.config.cors;
    if (kind === 'public') {
      reply.header('access-control-allow-origin', '*').header('access-control-expose-headers', EXPOSE_HEADERS);
    } else if (kind === 'keyed') {
      // The answer differs by origin: caches must keep one per origin.
      reply.header('vary', 'origin');
      if (this.origins.has(origin.toLowerCase())) {
        reply.header('access-control-allow-origin', origin).header('access-control-expose-headers', EXPOSE_HEADERS);
      }
    }
  }
}

/**
 * Registers the preflights (OPTIONS) of paths. The allow-origin header comes from Cors.answer like on
 * any other answer; an origin not allowed gets 204 without it, which the browser treats as a refusal.
 */
export function registerPreflights(app: FastifyInstance, paths: ReadonlyArray<{ path: string; kind: CorsKind; methods: string }>): void {
  // A preflight has no body: OPTIONS is made bodyless, so Fastify never parses (or refuses, in a shape
  // the pricing host does not use) whatever body a client sends with one. No other route uses OPTIONS.
  app.addHttpMethod('OPTIONS', { hasBody: false, overrideExisting: true });
  for (const { path, kind, methods } of paths) {
    app.options(path, { config: { cors: kind } }, async (_req, reply) =>
      reply
        .code(204)
        .header('access-control-allow-methods', methods)
        .header('access-control-allow-headers', ALLOW_HEADERS[kind])
        .header('access-control-max-age', PREFLIGHT_MAX_AGE)
        .send(),
    );
  }
}
