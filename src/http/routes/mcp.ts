import type { IncomingMessage } from 'node:http';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Principal } from '../../accounts/index.js';
import { AppError } from '../../errors.js';
import { mcpServer } from '../../mcp/index.js';
import type { Services } from '../../services.js';
import { resourceMetadataUrl } from './oauth.js';

/** The JSON-RPC answer to GET and DELETE: a stateless server has no stream to open and no session to end. */
const NOT_ALLOWED = { jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed: this MCP endpoint is stateless; send POST' }, id: null };
const BOTH = 'application/json, text/event-stream';

/**
 * /mcp on the pricing address (one port serves both; PRICING_BASE_URL advertises it): MCP over
 * Streamable HTTP, stateless. Every POST gets a fresh server and transport, so requests may land
 * on any process (decision 2202):
 * - /mcp serves the public tools without a credential (the pricing host's endpoint of the spec)
 *   and, with an API key or an OAuth access token, the tools its scopes allow; a credential that
 *   is invalid, expired or revoked answers 401 with the OAuth metadata's address;
 * - /mcp/agent is the same endpoint for agents that sign in with OAuth: without a credential it
 *   answers 401 with the metadata's address (the MCP authorization specification), so the
 *   agent's client starts the sign-in;
 * - /mcp/public serves the public tools whatever it is sent.
 */
export function registerMcpRoutes(app: FastifyInstance, services: Services) {
  // The credential is checked before the body is read (issue 39 finding 1); a wrong one answers 401 at once.
  const keyed = (path: '/mcp' | '/mcp/agent') => async (req: FastifyRequest, reply: FastifyReply) => {
    const given = req.headers.authorization !== undefined && req.headers.authorization !== '';
    if (!given && path === '/mcp') return;
    try {
      req.principal = await services.auth.authenticate(req.headers.authorization, null);
    } catch (e) {
      if (!(e instanceof AppError) || e.kind !== 'unauthenticated') throw e;
      if (!req.raw.complete) reply.header('connection', 'close');
      return unauthorized(services, path, req, reply, e.message);
    }
  };
  const handler = async (req: FastifyRequest, reply: FastifyReply) => serve(services, req, reply, req.principal);
  app.post('/mcp', { preParsing: keyed('/mcp') }, handler);
  app.post('/mcp/agent', { preParsing: keyed('/mcp/agent') }, handler);
  app.post('/mcp/public', async (req, reply) => serve(services, req, reply, null));
  const notAllowed = async (_req: unknown, reply: FastifyReply) => reply.code(405).header('allow', 'POST').send(NOT_ALLOWED);
  app.get('/mcp', notAllowed);
  app.delete('/mcp', notAllowed);
}

/** 401 with where the OAuth metadata is (RFC 9728 §5.1), so an MCP client can sign in; the JSON-RPC error says how to send a key. */
function unauthorized(services: Services, path: string, req: FastifyRequest, reply: FastifyReply, why: string) {
  const given = req.headers.authorization !== undefined && req.headers.authorization !== '';
  const metadata = resourceMetadataUrl(services, path);
  const challenge = `Bearer resource_metadata="${metadata}"${given ? ', error="invalid_token"' : ''}`;
  const message = `${why}. Send Authorization: Bearer <API key or OAuth access token> (OAuth: see ${metadata}), or send no credential to ${services.config.PRICING_BASE_URL}/mcp for the tools that need no key`;
  return reply
    .code(401)
    .header('www-authenticate', challenge)
    .send({ jsonrpc: '2.0', error: { code: -32001, message }, id: idOf(req.body) });
}

async function serve(services: Services, req: FastifyRequest, reply: FastifyReply, principal: Principal | null) {
  const authorization = principal ? req.headers.authorization : undefined;
  const server = mcpServer(services, { authorization, principal, requestId: req.id }, (err) => req.log.error({ err }, 'mcp tool failed'));
  // A client that accepts only JSON gets one JSON answer (no progress notifications: they need the stream).
  const json = !acceptsStream(req.headers.accept);
  setAccept(req.raw, BOTH);
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: json });
  reply.hijack();
  reply.raw.setHeader('x-request-id', req.id);
  reply.raw.on('close', () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(req.raw, reply.raw, req.body);
}

function acceptsStream(accept: string | undefined): boolean {
  return (accept ?? '').toLowerCase().includes('text/event-stream');
}

/** Sets Accept as the SDK's transport reads it (from the raw header list). */
function setAccept(raw: IncomingMessage, value: string): void {
  raw.headers.accept = value;
  const rest: string[] = [];
  for (let i = 0; i < raw.rawHeaders.length; i += 2) {
    if (raw.rawHeaders[i]!.toLowerCase() !== 'accept') rest.push(raw.rawHeaders[i]!, raw.rawHeaders[i + 1]!);
  }
  raw.rawHeaders.splice(0, raw.rawHeaders.length, ...rest, 'Accept', value);
}

function idOf(body: unknown): string | number | null {
  const id = typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as { id?: unknown }).id : undefined;
  return typeof id === 'string' || typeof id === 'number' ? id : null;
}
