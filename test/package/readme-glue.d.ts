// What a reader brings to README.md's ```ts blocks: the names a block uses but leaves to the reader's own app.
// Global on purpose: each block is compiled as its own module, so a block that imports or declares one of these
// names itself shadows it here. Only what the blocks use, typed with the package's published types (never restated
// by hand), so a block that misuses the package still fails. Excluded from test/tsconfig.json: these globals belong
// to the packed host's README compile only (test/package/readme-blocks.ts).

declare namespace ReadersGlue {
  type Store = import('express-oauth-router').Store;
  type RequestHandler = import('express').RequestHandler;
}

// The reader's Express app and port, and what they built in "Embedding in your app".
declare const app: import('express').Express;
declare const port: number;
declare const store: ReadersGlue.Store;
declare const oauth: import('express-oauth-router').OAuthRouter;
declare const options: import('express-oauth-router').OAuthRouterOptions;
declare const issuer: string;
declare const userAuth: import('express-oauth-router').UserAuth;

// The reader's own API handlers.
declare function listEnvelopes(clientId: string, userId: string | null): unknown;
declare const signEnvelope: ReadersGlue.RequestHandler;
declare const onlyForPrometheus: ReadersGlue.RequestHandler;

// Imports a short block leaves out (the blocks that introduce them import them).
declare const createOAuthRouter: typeof import('express-oauth-router').createOAuthRouter;
declare const createRedisStore: typeof import('express-oauth-router/stores/redis').createRedisStore;

// The reader's express-session (its @types: connect-redis's declarations import them) and passport, as far as
// "Middleware order with your own login" calls it (not installed: its @types would augment Express's Request).
declare const session: typeof import('express-session');
declare const passport: { initialize(): ReadersGlue.RequestHandler; session(): ReadersGlue.RequestHandler };

// The reader's JWT signing keys (PEM), "JWT access tokens".
declare const newKeyPem: string;
declare const oldKeyPem: string;

// The reader's own store and its test harness, "Checking your store: the conformance suite".
declare function createMariaDbStore(options: { database: string }): Promise<ReadersGlue.Store>;
declare function createFreshDatabase(): Promise<string>;
declare function dropDatabase(store: ReadersGlue.Store): Promise<void>;
declare function databaseOf(store: ReadersGlue.Store): string;
declare function proxyOf(store: ReadersGlue.Store): { setMode(mode: 'up' | 'down'): void };
declare function createStore(): Promise<ReadersGlue.Store>;
declare function destroyStore(store: ReadersGlue.Store): Promise<void>;
declare function simulateOutage(store: ReadersGlue.Store): Promise<() => Promise<void>>;
