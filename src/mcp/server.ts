import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { AppError, Errors, statusOf } from '../errors.js';
import { API_DOC_VERSION, countKeyCall, failure } from '../api/index.js';
import { CalculatorError } from '../pricing/index.js';
import type { Services } from '../services.js';
import type { Principal } from '../accounts/index.js';
import { TOOLS, ToolAnswer, type Tool } from './tools.js';

/**
 * The MCP request's own facts: its Authorization header (keyed tools authenticate with it per
 * call, for their scope), the caller it names (null without one: keyed tools are not listed), and
 * the request id (quoted in a 500).
 */
export interface McpRequest {
  authorization: string | undefined;
  principal: Principal | null;
  requestId: string;
}

const INSTRUCTIONS =
  'GenGate generates images, video and music, pay per run. Find a model with list_models, its input schema with get_model, the price with calculate_price. ' +
  'Then create_task {model, input} (charged at creation, refunded on failure) and wait_for_task until done; results come as image or audio content or as links. ' +
  'Files for an input (a photo, a clip, a song): upload_file first and pass its url.';

/** Tools the caller may call: every public one, and the keyed ones its scopes allow (none without a credential). */
function visible(tool: Tool, principal: Principal | null): boolean {
  if (!tool.scope) return true;
  return principal !== null && (principal.scopes === null || principal.scopes.includes(tool.scope));
}

/** A refusal as an MCP tool error: the REST API's `msg` as text, its envelope (or the calculator's body) as structured content. */
function toolError(services: Services, req: McpRequest, e: unknown): CallToolResult {
  if (e instanceof CalculatorError) return { isError: true, content: [{ type: 'text', text: e.message }], structuredContent: e.body() };
  const err = e instanceof AppError ? e : new AppError('internal', `internal error; quote request id ${req.requestId} when reporting it`);
  const [status, type] = statusOf(err.kind, services.config.ERROR_STYLE);
  return { isError: true, content: [{ type: 'text', text: err.message }], structuredContent: failure(status, type, err.message, err.data) };
}

/** A fresh MCP server for one HTTP request (stateless: nothing is kept between requests, so any process can answer). */
export function mcpServer(services: Services, req: McpRequest, log: (err: unknown) => void): Server {
  const server = new Server({ name: 'gengate', title: 'GenGate', version: API_DOC_VERSION }, { capabilities: { tools: {} }, instructions: INSTRUCTIONS });

  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: TOOLS.filter((t) => visible(t, req.principal)).map((t) => ({
      name: t.name,
      title: t.title,
      description: t.description,
      inputSchema: t.inputSchema(services) as { type: 'object' },
      annotations: {
        title: t.title,
        readOnlyHint: t.readOnly,
        openWorldHint: false,
        ...(t.readOnly ? {} : { idempotentHint: false, destructiveHint: t.destructive === true }),
      },
    })),
  }));

  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const tool = TOOLS.find((t) => t.name === request.params.name);
    if (!tool) {
      return {
        isError: true,
        content: [{ type: 'text', text: `unknown tool ${JSON.stringify(request.params.name)}; tools: ${TOOLS.map((t) => t.name).join(', ')}` }],
      };
    }
    const token = request.params._meta?.progressToken;
    try {
      if (tool.scope && !req.principal) {
        throw Errors.unauthenticated(
          `${tool.name} needs an API key or an OAuth access token: connect to ${services.config.PRICING_BASE_URL}/mcp with Authorization: Bearer <credential>`,
        );
      }
      const principal = tool.scope ? await services.auth.authenticate(req.authorization, tool.scope) : null;
      if (principal && tool.scope) await countKeyCall(services, principal, tool.scope); // the same per-key budget as REST
      const out = await tool.run(request.params.arguments ?? {}, {
        services,
        principal,
        signal: extra.signal,
        progress: async (progress, total, message) => {
          if (token !== undefined)
            await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress, total, message } });
        },
      });
      const { data, media } = out instanceof ToolAnswer ? out : { data: out, media: [] };
      return { content: [{ type: 'text', text: JSON.stringify(data) }, ...(media as CallToolResult['content'])], structuredContent: data };
    } catch (e) {
      if (!(e instanceof AppError) && !(e instanceof CalculatorError)) log(e);
      return toolError(services, req, e);
    }
  });
  return server;
}
