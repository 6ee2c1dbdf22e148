// A host whose client_credentials integration was imported with a bcrypt hash, and stand-ins for bcryptjs, for the tests of the bcrypt worker's faults.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { vi } from 'vitest';
import { basic, createTestApp, type TestClient } from './app.js';
import { OAuthEvents } from '../../src/events/oauth-events.js';
import type { OAuthEvent } from '../../src/events/event-types.js';

/** What a client is told of a server fault (RFC 6749 §5.2 `server_error`), whatever the fault. */
export const SERVER_ERROR = { error: 'server_error', error_description: 'the server encountered an unexpected condition' };

/** A host (behind a loopback proxy, so each test source is its own) whose client_credentials integration was imported
 * with a bcrypt hash; one failure per (client_id, source) blocks that source, so a counted fault would show as 429. */
export async function hostWithBcryptSecret(secret: string, hash: string) {
  const logged: string[] = [];
  const seen: OAuthEvent[] = [];
  const events = new OAuthEvents();
  events.on('event', (event) => seen.push(event));
  const t = await createTestApp({
    clientAuthRateLimit: { max: 1, maxPerSource: 1 },
    events,
    logger: { warn(line: string) { logged.push(line); }, error(line: string) { logged.push(line); } },
  });
  t.app.set('trust proxy', 'loopback');
  const imported: TestClient = { clientId: t.credentialsClient.clientId, clientSecret: secret };
  await t.store.clients.updateClient!(imported.clientId, { clientSecretHash: hash });
  const token = (client: TestClient, source: string) => request(t.app).post('/oauth2/token').type('form')
    .set('X-Forwarded-For', source).set('Authorization', basic(client)).send({ grant_type: 'client_credentials' });
  const counted = () => seen.filter((event) => event.type === 'client.authentication_failed' || event.type === 'rate_limit.hit');
  return { imported, token, logged, counted };
}

/** Lets `ms` pass for the monotonic clock (performance.now) the worker's restarts and the log throttle read. */
export function laterBy(ms: number): void {
  const monotonic = performance.now.bind(performance);
  vi.spyOn(performance, 'now').mockImplementation(() => monotonic() + ms);
}

/** Runs `use` with a directory of CommonJS modules for a worker to load instead of bcryptjs (`bcryptWorkerForTests`),
 * each written from its source; the real bcryptjs is `BCRYPTJS` in them. The directory is removed afterwards. */
export async function withFakeBcryptjs<T>(sources: Record<string, string>, use: (paths: Record<string, string>) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), 'bcrypt-worker-'));
  try {
    const bcryptjs = JSON.stringify(createRequire(import.meta.url).resolve('bcryptjs'));
    const paths: Record<string, string> = {};
    for (const [name, source] of Object.entries(sources)) {
      paths[name] = join(dir, `${name}.cjs`);
      writeFileSync(paths[name], `const BCRYPTJS = ${bcryptjs};\n${source}\n`);
    }
    return await use(paths);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
