// The banner's store line, and a failure to open the store, never show a password, whatever form OAUTH_STORE takes.
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatBanner } from '../../example-app/banner.js';
import { redactStoreUrl } from '../../example-app/redact-store-url.js';

const ROOT = resolve(import.meta.dirname, '../..');
const SERVER = resolve(ROOT, 'example-app/dist/server.js');

describe('redactStoreUrl: every password in OAUTH_STORE becomes ***, everything else stays as written', () => {
  it.each([
    ['postgres userinfo', 'postgres://app:S3cr%40t@db.internal:5432/oauth?schema=acme', 'postgres://app:***@db.internal:5432/oauth?schema=acme'],
    ['postgresql userinfo', 'postgresql://app:pw@db/oauth', 'postgresql://app:***@db/oauth'],
    ['postgres ?password= (node-postgres reads it as the password)', 'postgresql://u@host/db?password=SECRET', 'postgresql://u@host/db?password=***'],
    ['postgres ?sslpassword= and any case', 'postgres://u@host/db?sslmode=verify-full&SSLPassword=KEYPASS&PASSWORD=Other&schema=x', 'postgres://u@host/db?sslmode=verify-full&SSLPassword=***&PASSWORD=***&schema=x'],
    ['postgres userinfo and ?password= together', 'postgres://u:one@h/db?password=two', 'postgres://u:***@h/db?password=***'],
    ['a percent-encoded parameter name', 'postgres://u@h/db?pass%77ord=SECRET', 'postgres://u@h/db?pass%77ord=***'],
    ['a PostgreSQL host list (no URL parser reads it)', 'postgres://u:pw@h1:5432,h2:5432/db', 'postgres://u:***@h1:5432,h2:5432/db'],
    ['redis userinfo', 'redis://default:pw@cache:6379?prefix=oauth:', 'redis://default:***@cache:6379?prefix=oauth:'],
    ['redis password only', 'rediss://:pw@cache:6380', 'rediss://:***@cache:6380'],
    ['a password holding @', 'redis://u:p@ss@cache:6379', 'redis://u:***@cache:6379'],
    ['redis+cluster node list', 'redis+cluster://default:pw@h1:7000,h2:7000?prefix=acme:', 'redis+cluster://default:***@h1:7000,h2:7000?prefix=acme:'],
    ['rediss+cluster node list', 'rediss+cluster://u:pw@[::1]:7000,[::1]:7001', 'rediss+cluster://u:***@[::1]:7000,[::1]:7001'],
    ['a user without a password', 'redis://reader@cache:6379', 'redis://reader@cache:6379'],
    ['sqlite: (no password)', 'sqlite:./data/oauth.sqlite?synchronous=normal', 'sqlite:./data/oauth.sqlite?synchronous=normal'],
    ['sqlite:/// with @ in the path', 'sqlite:///srv/a@b.sqlite', 'sqlite:///srv/a@b.sqlite'],
    ['memory:', 'memory:', 'memory:'],
  ])('%s', (_form, url, shown) => {
    expect(redactStoreUrl(url)).toBe(shown);
  });
});

describe('the banner', () => {
  it('shows the store URL redacted', () => {
    const banner = formatBanner({
      listenUrl: 'http://localhost:3000', authUrl: 'http://localhost:3000', legacyAuthUrl: 'http://localhost:3000/legacy',
      storeUrl: 'redis+cluster://default:CLUSTER-PW@h1:7000,h2:7000', username: 'demo', generatedPassword: null,
      redirectUri: 'http://localhost:3000/demo/callback', demo: { created: false, clientCredentials: null, code: null, total: 0 },
    });
    expect(banner).toContain('  store:           redis+cluster://default:***@h1:7000,h2:7000');
    expect(banner).not.toContain('CLUSTER-PW');
  });
});

describe('a store the app cannot open at start-up', () => {
  it('exits 1 with one line naming the store, its password redacted, and the cause', async () => {
    const { code, stderr } = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, [SERVER], {
        // Never listened on: the store is opened first.
        cwd: ROOT, env: { ...process.env, PORT: '65535', OAUTH_STORE: 'postgres://audit:s3cret-pass@127.0.0.1:1/test' },
      });
      let err = '';
      child.stderr.on('data', (chunk: Buffer) => { err += chunk.toString(); });
      child.on('exit', (exitCode) => resolve({ code: exitCode, stderr: err }));
    });
    expect(code).toBe(1);
    expect(stderr).toBe('Cannot open the store postgres://audit:***@127.0.0.1:1/test: PostgreSQL store unavailable (ECONNREFUSED)\n');
  });
});
