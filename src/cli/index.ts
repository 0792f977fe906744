/** The gengate command's parts: operator commands, and `serve`, loaded on demand so operator commands never load the HTTP stack. */
export { addAdminCommands } from './admin.js';
export { addMemberCommands } from './members.js';
export { addMoneyCommands } from './money.js';
export { addModelsCommands, checkModels, importModels } from './models.js';
export { addBackupCommands } from './backup.js';
export { addDoctorCommand } from './doctor.js';

/** `gengate serve`, loaded on demand. */
export async function loadServe() {
  return (await import('./serve.js')).serve;
}
