// A driver missing under Yarn Plug'n'Play is named by the store's own message, as under npm and pnpm; one not built
// says how Yarn builds it.
import { afterEach, describe, expect, it, vi } from 'vitest';

// What Yarn 4's PnP runtime throws (Yarn 4.18.1, Node 20) for a peer dependency the host did not install: its own
// words, no quoted name, with the package it wanted in `data.dependencyName` (`request` is what was asked for).
function pnpMissingPeer(request: string, dependencyName: string): Error {
  return Object.assign(
    new Error(
      `express-oauth-router tried to access ${dependencyName} (a peer dependency) but it isn't provided by your application; `
      + `this makes the require call ambiguous and unsound.\n\nRequired package: ${dependencyName}`
      + (request === dependencyName ? '' : ` (via "${request}")`),
    ),
    {
      code: 'MODULE_NOT_FOUND',
      pnpCode: 'MISSING_PEER_DEPENDENCY',
      data: { request, dependencyName, issuer: '/app/.yarn/__virtual__/express-oauth-router-virtual-0/dist/' },
    },
  );
}

let thrown: Error | null = null;
/** better-sqlite3 installed without its addon: what `bindings` throws when the constructor first opens a database. */
class UnbuiltDatabase {
  constructor() {
    throw new Error('Could not locate the bindings file. Tried:\n → /app/node_modules/better-sqlite3/build/better_sqlite3.node');
  }
}
vi.mock('../../src/runtime-require.js', () => ({
  runtimeRequire: () => Object.assign((name: string) => {
    if (thrown) throw thrown;
    return name === 'better-sqlite3' ? UnbuiltDatabase : { name };
  }, { resolve: (name: string) => name }),
}));

const { isMissing, requireDriver } = await import('../../src/stores/missing-driver.js');
const { loadBetterSqlite3 } = await import('../../src/stores/sqlite/driver.js');
const SQLITE = { store: 'SQLite', name: 'better-sqlite3', major: 12 } as const;
afterEach(() => { thrown = null; });

describe('drivers missing under Yarn PnP', () => {
  it('the SQLite store names better-sqlite3 (PnP require: MISSING_PEER_DEPENDENCY), not Yarn\'s resolution message', () => {
    thrown = pnpMissingPeer('better-sqlite3', 'better-sqlite3');
    expect(() => requireDriver(SQLITE)).toThrow(new Error('The SQLite store needs better-sqlite3: npm install better-sqlite3@12'));
  });

  it.each([
    // The PnP ESM loader asks for the package's package.json first (import('pg'), import('redis')).
    ['pg/package.json', 'pg', 'MISSING_PEER_DEPENDENCY'],
    ['redis/package.json', 'redis', 'MISSING_PEER_DEPENDENCY'],
    ['prom-client', 'prom-client', 'MISSING_PEER_DEPENDENCY'],
    // A package Yarn sees the issuer not declare at all (a host that patched the peer away).
    ['better-sqlite3', 'better-sqlite3', 'UNDECLARED_DEPENDENCY'],
  ])('%s missing is %s missing (%s)', (request, name, pnpCode) => {
    expect(isMissing(Object.assign(pnpMissingPeer(request, name), { pnpCode }), name)).toBe(true);
  });

  it('a dependency of the driver missing, or another package, is not the driver missing', () => {
    // better-sqlite3 installed, its own `bindings` not: that is the driver's install to repair, not a package to add.
    expect(isMissing(pnpMissingPeer('bindings', 'bindings'), 'better-sqlite3')).toBe(false);
    expect(isMissing(pnpMissingPeer('pg-pool', 'pg-pool'), 'pg')).toBe(false);
    // A PnP error of another kind (the package is there but a file in it is not) names no missing package.
    expect(isMissing(Object.assign(pnpMissingPeer('pg', 'pg'), { pnpCode: 'QUALIFIED_PATH_RESOLUTION_FAILED' }), 'pg')).toBe(false);
  });
});

describe('better-sqlite3 installed but not built says how the package manager that installed it builds it', () => {
  afterEach(() => { vi.unstubAllEnvs(); });
  const NOT_BUILT = "The SQLite store's better-sqlite3 is installed but not built (its install script did not run): ";

  it.each([
    // npm 11 skips scripts missing from allowScripts; Yarn 1 runs them (a --ignore-scripts install gets npm's words).
    ['npm/11.19.1 node/v20.20.2 linux x64 workspaces/false', 'npm install-scripts approve better-sqlite3 && npm rebuild better-sqlite3'],
    ['yarn/1.22.22 npm/? node/v20.20.2 linux x64', 'npm install-scripts approve better-sqlite3 && npm rebuild better-sqlite3'],
    // Yarn 4.18.1 builds no dependency unless package.json's dependenciesMeta says so ("all build scripts have been disabled").
    ['yarn/4.18.1 npm/? node/v20.20.2 linux x64', 'add "dependenciesMeta": { "better-sqlite3": { "built": true } } to your package.json, then yarn install'],
  ])('run under %s', (agent, advice) => {
    vi.stubEnv('npm_config_user_agent', agent);
    expect(() => loadBetterSqlite3()).toThrow(new Error(NOT_BUILT + advice));
  });
});

