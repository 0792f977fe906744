import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { FastifyInstance } from 'fastify';
import { mcpServer } from '../../mcp/index.js';
import type { Services } from '../../services.js';

/** The JSON-RPC answer to GET and DELETE: a stateless server has no stream to open and no session to end. */
const NOT_ALLOWED = { jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed: this MCP endpoint is stateless; send POST' }, id: null };

/**
 * /mcp on the pricing address (one port serves both; PRICING_BASE_URL advertises it): MCP over
 * Streamable HTTP, stateless. Every POST gets a fresh server and transport, so requests may land
 * on any process; the keyed tools read this request's Authorization header.
 */
export function registerMcpRoutes(app: FastifyInstance, services: Services) {
  app.post('/mcp', async (req, reply) => {
    const server = mcpServer(services, { authorization: req.headers.authorization, requestId: req.id }, (err) => req.log.error({ err }, 'mcp tool failed'));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    reply.hijack();
    reply.raw.setHeader('x-request-id', req.id);
    reply.raw.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req.raw, reply.raw, req.body);
  });
  const notAllowed = async (_req: unknown, reply: import('fastify').FastifyReply) => reply.code(405).header('allow', 'POST').send(NOT_ALLOWED);
  app.get('/mcp', notAllowed);
  app.delete('/mcp', notAllowed);
}
