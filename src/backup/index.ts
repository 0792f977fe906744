/** `gengate backup` and `gengate restore` of a SQLite server (decision 2601); PostgreSQL is backed up with its own tools. */
export { makeBackup, readFacts, BACKUP_NAME, type BackupPlan, type Made, type Manifest } from './backup.js';
export { restoreBackup, type RestorePlan } from './restore.js';
