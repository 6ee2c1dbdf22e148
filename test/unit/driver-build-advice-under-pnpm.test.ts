// better-sqlite3 installed by pnpm but not built (pnpm 10 and 12 run no dependency's build script unless approved)
// says pnpm's way to build it, wherever the process was started from: pnpm exec, npx, or plain node.
import { afterEach, describe, expect, it, vi } from 'vitest';

/** Where the mocked require resolves better-sqlite3 from; null makes resolve() throw, as for a bundle that inlined it. */
let resolvedFrom: string | null = null;
/** better-sqlite3 installed without its addon: what `bindings` throws when the constructor first opens a database. */
class UnbuiltDatabase {
  constructor() {
    throw new Error(`Could not locate the bindings file. Tried:\n → ${resolvedFrom ?? '/app'}/../build/better_sqlite3.node`);
  }
}
vi.mock('../../src/runtime-require.js', () => ({
  runtimeRequire: () => Object.assign((name: string) => (name === 'better-sqlite3' ? UnbuiltDatabase : { name }), {
    resolve: (name: string) => {
      if (resolvedFrom === null) throw Object.assign(new Error(`Cannot find module '${name}'`), { code: 'MODULE_NOT_FOUND' });
      return resolvedFrom;
    },
  }),
}));

const { loadBetterSqlite3 } = await import('../../src/stores/sqlite/driver.js');

const NOT_BUILT = "The SQLite store's better-sqlite3 is installed but not built (its install script did not run): ";
const PNPM = 'pnpm approve-builds better-sqlite3 (pnpm 10 lists it for you to pick; on pnpm 9, pnpm rebuild better-sqlite3)';
const NPM = 'npm install-scripts approve better-sqlite3 && npm rebuild better-sqlite3';
// Where pnpm 10.34.9 put it (its content-addressed layout), and where npm puts it.
const PNPM_PATH = '/app/node_modules/.pnpm/better-sqlite3@12.11.1/node_modules/better-sqlite3/lib/index.js';
const PNPM_WINDOWS_PATH = 'C:\\app\\node_modules\\.pnpm\\better-sqlite3@12.11.1\\node_modules\\better-sqlite3\\lib\\index.js';
const NPM_PATH = '/app/node_modules/better-sqlite3/lib/index.js';

describe('better-sqlite3 installed by pnpm but not built says pnpm approve-builds, not npm\'s command', () => {
  afterEach(() => { vi.unstubAllEnvs(); resolvedFrom = null; });

  it.each([
    // `pnpm exec oauth-admin`, `pnpm start`: pnpm's user agent, whatever the layout (node-linker=hoisted has no .pnpm).
    ['pnpm/10.34.9 npm/? node/v20.20.2 linux x64', NPM_PATH, PNPM],
    ['pnpm/12.23.0 npm/? node/v20.20.2 linux x64', null, PNPM],
    // `npx oauth-admin` in a pnpm project (npm's user agent) and `node server.js` (none): the driver's path in pnpm's store.
    ['npm/11.19.1 node/v20.20.2 linux x64 workspaces/false', PNPM_PATH, PNPM],
    ['', PNPM_PATH, PNPM],
    ['', PNPM_WINDOWS_PATH, PNPM],
    // npm's layout, or a path that cannot be told, keeps npm's words.
    ['', NPM_PATH, NPM],
    ['', null, NPM],
    // Yarn Berry's words win over a path (a Yarn project with nodeLinker: pnpm has node_modules/.store, not .pnpm).
    ['yarn/4.18.1 npm/? node/v20.20.2 linux x64', PNPM_PATH, 'add "dependenciesMeta": { "better-sqlite3": { "built": true } } to your package.json, then yarn install'],
  ])('user agent %j, better-sqlite3 at %s', (agent, path, advice) => {
    vi.stubEnv('npm_config_user_agent', agent);
    resolvedFrom = path;
    expect(() => loadBetterSqlite3()).toThrow(new Error(NOT_BUILT + advice));
  });
});
