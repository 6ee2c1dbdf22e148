// Entry point of the example app: reads the environment, opens the store, seeds the demo, listens.
import { createServer } from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { createStoreFromUrl, DEFAULT_STORE_URL, describeStoreError } from 'express-oauth-router';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { createApp } from './app.js';
import { createAppLogger, storeLogger } from './audit-log.js';
import { formatBanner } from './banner.js';
import { redactStoreUrl } from './redact-store-url.js';
import { closeConnectionsOnDrain } from './close-connections-on-drain.js';
import { seedDemoClients, type DemoClients } from './seed.js';
import { createSessionStore } from './session-store.js';
import { parseTrustProxy, trustProxyWarning } from './trust-proxy.js';
import { parseMetricsAccess } from './metrics-access.js';
import { scopesFromEnvironment } from './scopes.js';
import { checkDemoPassword, createDemoPassword, createDemoUserAuth } from './users.js';

/** How long a keep-alive connection idle at shutdown may still send a request (answered with Connection: close). */
const IDLE_GRACE_MS = 1000;

function env(name: string): string | undefined {
  const value = process.env[name]?.trim();
  return value ? value : undefined;
}

/**
 * PORT, 1 to 65535. 0 (any free port) is refused: AUTH_URL's default and the demo redirect URI registered in the
 * store both name the port before the server listens, so they would read http://localhost:0 (an issuer and a
 * callback nobody can reach, the latter kept in the store).
 */
function parsePort(value: string): number {
  const port = Number(value);
  if (!/^\d+$/.test(value) || port > 65535) throw new TypeError(`PORT must be a port number, got ${JSON.stringify(value)}`);
  if (port === 0) {
    throw new TypeError('PORT=0 (any free port) is not supported: AUTH_URL and the demo redirect URI name the port; choose one, e.g. PORT=3000');
  }
  return port;
}

/** The OAuth store of OAUTH_STORE; a failure to open it names the store (its password redacted) and the cause. */
async function openStore(storeUrl: string, log: ReturnType<typeof createAppLogger>) {
  try {
    return await createStoreFromUrl(storeUrl, { logger: storeLogger(log) });
  } catch (error) {
    const cause = error instanceof Error ? error.message : String(error);
    throw new (error instanceof TypeError ? TypeError : Error)(`Cannot open the store ${redactStoreUrl(storeUrl)}: ${cause}`);
  }
}

async function main(): Promise<void> {
  const port = parsePort(env('PORT') ?? '3000');
  const authUrl = (env('AUTH_URL') ?? `http://localhost:${port}`).replace(/\/+$/, '');
  const legacyAuthUrl = env('LEGACY_AUTH_URL') ?? `${authUrl}/legacy`;
  const storeUrl = env('OAUTH_STORE') ?? DEFAULT_STORE_URL;
  const username = env('DEMO_USERNAME') ?? 'demo';
  const givenPassword = env('DEMO_PASSWORD');
  checkDemoPassword(givenPassword);
  const password = givenPassword ?? createDemoPassword();
  const sessionSecret = env('SESSION_SECRET');
  const trustProxy = parseTrustProxy(env('TRUST_PROXY'));
  const metricsAccess = parseMetricsAccess(env('METRICS_TOKEN'), env('METRICS_LOCAL_ONLY'));
  // The vocabulary oauth-admin checks registrations against, when set: the app then grants exactly those scopes.
  const scopes = scopesFromEnvironment(env('OAUTH_SCOPES'));
  const redirectUri = `http://localhost:${port}/demo/callback`;

  // One logger for everything, so the stores' connection warnings are JSON lines on stdout like the rest.
  const log = createAppLogger();
  const proxyWarning = trustProxyWarning(trustProxy);
  if (proxyWarning) log.warn({ trustProxy }, proxyWarning);
  const store = await openStore(storeUrl, log);
  const sessions = await createSessionStore(storeUrl, { logger: storeLogger(log) });
  const closeStores = (): Promise<unknown> => Promise.all([sessions.close(), store.close?.()]);
  // The demo integrations are registered last, once everything that can refuse this start has run (the app's
  // options, the port): their secrets are printed only by the start that registers them, so a start that failed
  // after registering lost them, and every later start showed the ids only.
  let demo: DemoClients | null = null;
  // /metrics serves the process's own metrics (CPU, memory, event loop lag) next to the router's.
  const metricsRegistry = new Registry();
  collectDefaultMetrics({ register: metricsRegistry });
  const { app } = createApp({
    store,
    userAuth: await createDemoUserAuth({ username, password }),
    authUrl,
    legacyAuthUrl,
    ...(sessionSecret ? { sessionSecret } : {}),
    ...(sessions.store ? { sessionStore: sessions.store } : {}),
    demoRedirectUri: redirectUri,
    demoCodeClientId: () => demo?.code?.clientId ?? null,
    ...(trustProxy !== undefined ? { trustProxy } : {}),
    log,
    metricsAccess,
    metricsRegistry,
    scopes,
  });

  // Slow or idle connections that never finish their headers are what an API's Node process runs out of first
  // (file descriptors): ended within 10 s of opening, checked every 2 s, where Node's defaults allow 60 s checked
  // every 30 s (an outside attack held 20,000 of them for 77 s each and the app answered no one). The router
  // bounds bodies itself (`bodyTimeout`).
  const server = createServer({ headersTimeout: 10_000, requestTimeout: 30_000, connectionsCheckingInterval: 2_000 }, app);
  const connections = closeConnectionsOnDrain(server);
  try {
    await new Promise<void>((listening, failed) => {
      server.once('error', failed);
      server.listen(port, () => {
        server.off('error', failed);
        listening();
      });
    });
  } catch (error) {
    console.error(`Cannot listen on port ${port}: ${error instanceof Error ? error.message : String(error)}`);
    await closeStores().finally(() => process.exit(1));
    return;
  }

  let stopping = false;
  const stop = (signal: NodeJS.Signals): void => {
    if (stopping) return;
    stopping = true;
    // A JSON line like every other after the banner, so a log collector reads the shutdown too.
    log.info({ signal }, 'shutting down');
    // From now on every response says Connection: close, so keep-alive clients reconnect instead of being cut.
    connections.drain();
    // Stop listening only: http.Server's close() also closes every idle keep-alive connection at once, and a busy
    // client's next request, already on its way on one of them, was reset (ECONNRESET on every wrk connection).
    net.Server.prototype.close.call(server, () => {
      void closeStores().then(
        () => process.exit(0),
        (error: unknown) => {
          log.error({ error: describeStoreError(error) }, 'closing the store failed');
          process.exit(1);
        },
      );
    });
    // A connection still idle after IDLE_GRACE_MS sent nothing more and is closed; one that did got Connection:
    // close with its answer. A stuck request is cut at 5 s.
    setTimeout(() => {
      server.closeIdleConnections();
    }, IDLE_GRACE_MS).unref();
    setTimeout(() => {
      server.closeAllConnections();
    }, 5000).unref();
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);

  // Read while listening: a stop during the seeding closes the server, and address() is null then.
  const actualPort = (server.address() as AddressInfo).port;
  try {
    demo = await seedDemoClients(store, redirectUri);
  } catch (error) {
    // A stop closed the store under the seeding: stop() exits, and there is nothing to report or show.
    if (stopping) return;
    throw error;
  }
  // Printed even when a stop came during the seeding: the integrations it registered exist now, and their secrets are
  // shown only here.
  process.stdout.write(`${formatBanner({
    listenUrl: `http://localhost:${actualPort}`,
    authUrl,
    legacyAuthUrl,
    storeUrl,
    scopes: Object.keys(scopes),
    sessions: sessions.description,
    warnSessionSecret: sessions.shared && !sessionSecret,
    username,
    generatedPassword: givenPassword ? null : password,
    redirectUri,
    demo,
  })}\n`);
}

main().catch((error: unknown) => {
  // Configuration errors (bad PORT, AUTH_URL, OAUTH_STORE, OAUTH_SCOPES) are reported as one line, without a stack.
  console.error(error instanceof Error ? error.message : String(error));
  process.exit(error instanceof TypeError ? 2 : 1);
});
