/** The gengate command's parts: operator commands, and `serve`, loaded on demand so operator commands never load the HTTP stack. */
export { addAdminCommands } from './admin.js';
export { addMemberCommands } from './members.js';
export { addMoneyCommands } from './money.js';
export { addModelsCommands, checkModels, importModels } from './models.js';

/** `gengate serve`, loaded on demand. */
export async function loadServe() {
  return (await import('./serve.js')).serve;
}
