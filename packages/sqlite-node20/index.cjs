// better-sqlite3 as the store loads it where node:sqlite is missing (src/store/sqlite-driver.ts).
module.exports = require('better-sqlite3');
module.exports.modulePath = require.resolve('better-sqlite3');
