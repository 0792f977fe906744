/** The MCP face of the api/ operations: a stateless server whose tools share their schemas, rules and key-call accounting. */
export { mcpServer, type McpRequest } from './server.js';
