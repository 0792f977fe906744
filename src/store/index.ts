// The store's public face: other folders import from here (src/store/README.md says what each
// read and write path sees and may await).
export { openDatabase, type Database, type Dialect, type OpenOptions, type TxOptions, type WriteStats } from './db.js';
export { migrate, DatabaseTooNew } from './migrate.js';
export { MIGRATIONS, type Migration } from './migrations/index.js';
export { StoreMisuse } from './guards.js';
export { precompile, prepared, insertRow, updateWhere, updateThen, dialectOf, type Then } from './prepared.js';
export { readByKey } from './batched.js';
export { WorkLoop, type WorkLog, type WorkLoopSpec } from './work-loop.js';
export { openConnection, defaultDriver, WRITER_PRAGMAS, type Connection, type SqliteDriverName } from './sqlite-driver.js';
export type * from './schema.js';
