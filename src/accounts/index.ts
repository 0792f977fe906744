export { Accounts, API_DIALECTS, WEBHOOK_SECRET_OVERLAP_MS, accountView, type AccountView, type WebhookSecrets } from './accounts.js';
export { Authenticator, ACCESS_TOKEN_PREFIX, actorOf, keyAllowsModel, type Principal } from './auth.js';
export { SCOPES, budgetOf, hashKey, type Scope, type KeyView } from './keys.js';
export { BUDGET_PERIODS, periodStart, describeBudget, parseIsoTime, type KeyBudget } from './budgets.js';
export { OPERATOR, capKeysMadeBy, keysMadeBy, revokeKeyIn, type KeyActor } from './custody.js';
export { OWNER_SCOPES, scopesOfRole, requireScope } from './roles.js';
export { endGrantsOf } from './grants.js';
