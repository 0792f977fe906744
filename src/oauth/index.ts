/** GenGate as the OAuth 2.1 authorization server of its MCP endpoint: clients, grants (each an API key), tokens (decision 2202). */
export {
  OAuth,
  OAUTH_SCOPES,
  CODE_TTL_MS,
  redirectWith,
  type AuthorizeRequest,
  type Consenter,
  type GrantView,
  type OAuthSettings,
  type TokenAnswer,
} from './oauth.js';
export { OAuthError } from './rules.js';
export { endUnexchangedConsents } from './grants.js';
