import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import { hostname } from 'node:os';
import type { Span } from '@opentelemetry/api';
import Fastify, { LogController, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Services } from '../services.js';
import { trustProxy } from './proxy.js';
import { Errors } from '../errors.js';
import { errorHandler, sendError } from './errors.js';
import { registerRoutes } from './routes/index.js';
import { registerOpsRoutes } from './routes/ops.js';
import { stdoutSink } from './log-sink.js';
import { Cors } from './cors.js';
import { clientErrorHandler, guardConnections, type CountCut } from './connections.js';
import { drainOnClose } from './drain.js';
import { tracing } from '../tracing/index.js';

/** The span of a request, kept on its raw request while tracing is on (decision 2603). */
const SPAN = Symbol('span');
type Traced = IncomingMessage & { [SPAN]?: Span };
import { lingerOnClose } from './linger.js';

/**
 * A request's URL as logs and traces show it: the tokens in it are credentials (an upstream
 * notification URL's, a download link's; issue 39 finding 10), so they are never written.
 */
export function shownUrl(url: string): string {
  if (url.startsWith('/files/dl/')) return url.replace(/^\/files\/dl\/[^/?]*/, '/files/dl/[redacted]');
  if (url.startsWith('/upstream/')) return url.replace(/\/notify\/[^/?]*/, '/notify/[redacted]');
  return url;
}

const GOOD_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Fields never written to logs. Exact paths only: pino's wildcard redaction cost ~40 µs on every
 * log line (measured), and no log call here passes nested secrets.
 */
export const REDACT = ['authorization', 'headers.authorization', 'req.headers.authorization', 'apiKey', 'webhookSecret', 'account.webhookSecret', 'secret'];

/**
 * The per-request work that must see every answer, done where Fastify calls in anyway (no hooks:
 * an onRequest or onResponse hook moves every request onto Fastify's slower hook path): the
 * `x-request-id` header when the request arrives, then one structured log line (Fastify's default
 * writes two) and the request metric when the answer is finished.
 */
class RequestLog extends LogController {
  /** What every pino line starts with after the time (pino's default base: pid and hostname). */
  private readonly base = `,"pid":${process.pid},"hostname":${JSON.stringify(hostname())}`;

  constructor(
    private readonly observe: (method: string, route: string | undefined, status: number, ms: number) => void,
    private readonly out: { write(line: string): unknown },
    /** LOG_LEVEL lets info lines through (it is fixed for the life of the process). */
    private readonly infoOn: boolean,
    private readonly cors: Cors,
  ) {
    super({ requestIdLogLabel: 'requestId' });
  }

  override incomingRequest(req: FastifyRequest, reply: FastifyReply): void {
    reply.header('x-request-id', req.id);
    const origin = req.headers.origin;
    if (origin !== undefined) this.cors.answer(req, reply, origin);
  }

  override requestCompleted(error: Error | null | undefined, req: FastifyRequest, reply: FastifyReply): void {
    const ms = Math.round(reply.elapsedTime * 10) / 10;
    const status = reply.statusCode;
    this.observe(req.method, req.routeOptions.url, status, reply.elapsedTime);
    const span = (req.raw as Traced)[SPAN];
    if (span) tracing.endRequest(span, req.method, req.routeOptions.url, status);
    const url = shownUrl(req.url);
    if (error) {
      reply.log.error({ method: req.method, url, status, ms, err: error }, 'request errored');
    } else if (this.infoOn) {
      // The same line pino would write for reply.log.info({method, url, status, ms}, 'request'),
      // put together directly: the request line is written for every request, and pino's
      // serialisation of it cost more than the rest of a cached read (measured).
      const trace = span ? `"traceId":"${span.spanContext().traceId}",` : '';
      this.out.write(
        `{"level":30,"time":${Date.now()}${this.base},${trace}"requestId":${JSON.stringify(req.id)},"method":${JSON.stringify(req.method)},` +
          `"url":${JSON.stringify(url)},"status":${status},"ms":${ms},"msg":"request"}\n`,
      );
    }
  }
}

/** A Node HTTP server whose requests each run in a new span's context (only built while tracing is on). */
function tracedServer(handler: (req: IncomingMessage, res: import('node:http').ServerResponse) => void) {
  return createServer((req: Traced, res) => {
    // The token of an upstream notification URL is a credential: never sent (as in the request log).
    const path = shownUrl((req.url ?? '/').split('?')[0]!);
    const { span, context } = tracing.startRequest(req.method ?? 'GET', path, req.headers);
    req[SPAN] = span;
    tracing.with(context, () => handler(req, res));
  });
}

/** Builds the HTTP app: envelope everywhere, request ids, redacted JSON logs, all routes (or, for a worker, only /healthz, /readyz, /metrics). */
export function buildApp(services: Services, opts: { logStream?: NodeJS.WritableStream; routes?: 'all' | 'ops' } = {}): FastifyInstance {
  const { config } = services;
  const out = opts.logStream ?? stdoutSink();
  const app = Fastify({
    logger: {
      level: config.LOG_LEVEL,
      redact: { paths: REDACT, censor: '[redacted]' },
      stream: out,
      // The active trace's ids on every line (the request line above writes its own).
      ...(tracing.on ? { mixin: () => tracing.logFields() } : {}),
    },
    // Each request runs in its span's context, so the spans it makes (create, upstream) are its children.
    ...(tracing.on ? { serverFactory: tracedServer } : {}),
    bodyLimit: config.BODY_LIMIT_BYTES,
    requestIdHeader: false,
    // Errors Fastify meets before routing (a malformed %-escape in the path) get the envelope too.
    frameworkErrors: (error, _req, reply) =>
      sendError(
        reply,
        config.ERROR_STYLE,
        Errors.invalid(error.code === 'FST_ERR_BAD_URL' ? 'the path has a malformed %-escape; encode "%" as %25' : 'the request could not be routed'),
      ),
    trustProxy: trustProxy(config),
    clientErrorHandler: clientErrorHandler(config),
    logController: new RequestLog(
      (method, route, status, ms) => services.metrics.observeRequest(method, route, status, ms),
      out,
      ['info', 'debug', 'trace'].includes(config.LOG_LEVEL),
      new Cors(config.CORS_ORIGINS),
    ),
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && GOOD_REQUEST_ID.test(given) ? given : randomUUID();
    },
  });
  const cut: CountCut = (reason, count = 1) => services.metrics.connectionsCut.inc({ reason }, count);
  guardConnections(app.server, config, app.log, cut);
  drainOnClose(app, config.SHUTDOWN_GRACE_MS, cut);
  lingerOnClose(app.server);
  // JSON only (uploads add multipart); a text body is a client mistake, not data.
  app.removeContentTypeParser('text/plain');
  app.decorateRequest('principal', null);
  app.setErrorHandler(errorHandler(config.ERROR_STYLE, config.BODY_LIMIT_BYTES));
  app.setNotFoundHandler((req, reply) => sendError(reply, config.ERROR_STYLE, Errors.notFound(`no route ${req.method} ${req.url.split('?')[0]}`)));
  if (opts.routes === 'ops') registerOpsRoutes(app, services);
  else registerRoutes(app, services);
  return app;
}
