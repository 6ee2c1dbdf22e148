// The example app's scope vocabulary is OAUTH_SCOPES when set, the one oauth-admin checks registrations against, so the
// two never disagree (RFC 6749 §3.3); a value leaving out a scope the app's routes require is refused at start-up.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { APP_SCOPES, scopesFromEnvironment } from '../../example-app/scopes.js';
import { startAppProcess, stopAppProcesses } from '../helpers/example-app-processes.js';
import { freePort } from '../helpers/free-port.js';
import { runCliWith, type CliResult } from '../helpers/run-cli.js';

const SERVER = resolve(import.meta.dirname, '../../example-app/dist/server.js');
const VOCABULARY = 'envelopes:read envelopes:write reports:read';

describe('scopesFromEnvironment: the app\'s `scopes` option from OAUTH_SCOPES', () => {
  it('unset or blank: the app\'s own scopes, with their consent-page words', () => {
    expect(scopesFromEnvironment(undefined)).toBe(APP_SCOPES);
    expect(scopesFromEnvironment('  ')).toBe(APP_SCOPES);
    expect(Object.keys(APP_SCOPES)).toEqual(['envelopes:read', 'envelopes:write']);
  });

  it('set: exactly its scopes, the app\'s words for its own and the scope itself for another', () => {
    expect(scopesFromEnvironment(` ${VOCABULARY}  reports:read `)).toEqual({
      'envelopes:read': APP_SCOPES['envelopes:read'], 'envelopes:write': APP_SCOPES['envelopes:write'], 'reports:read': 'reports:read',
    });
  });

  it('refuses a value leaving out a scope the API requires, naming it and the value that would do', () => {
    expect(() => scopesFromEnvironment('envelopes:read reports:read')).toThrow(TypeError);
    expect(() => scopesFromEnvironment('envelopes:read reports:read')).toThrow(
      'OAUTH_SCOPES leaves out envelopes:write, which this app\'s API requires (GET /api/v1/envelopes needs envelopes:read, POST envelopes:write): '
      + 'add it (OAUTH_SCOPES="envelopes:read reports:read envelopes:write"), or unset OAUTH_SCOPES for the app\'s own (envelopes:read envelopes:write)',
    );
  });

  it('refuses an entry that is not a scope-token (RFC 6749 §3.3)', () => {
    expect(() => scopesFromEnvironment('envelopes:read envelopes:write "quoted"')).toThrow(/^OAUTH_SCOPES: "\\"quoted\\"" is not a scope-token/);
  });
});

describe('the built example app and oauth-admin under one OAUTH_SCOPES', () => {
  let dir: string;
  let storeUrl: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'example-app-scopes-'));
    storeUrl = `sqlite:${join(dir, 'oauth.sqlite')}`;
  });

  afterEach(async () => {
    await stopAppProcesses();
    rmSync(dir, { recursive: true, force: true });
  });

  function admin(...args: string[]): Promise<CliResult> {
    return runCliWith([...args, '--json'], { env: { ...process.env, OAUTH_STORE: storeUrl, OAUTH_SCOPES: VOCABULARY } });
  }

  it('a scope oauth-admin registers from OAUTH_SCOPES is one the app grants, publishes and names in its banner', async () => {
    const app = await startAppProcess({ OAUTH_STORE: storeUrl, DEMO_PASSWORD: 'demo-password-for-tests', OAUTH_SCOPES: VOCABULARY });
    const created = await admin('clients', 'create', '--name', 'Reports', '--flow', 'client_credentials', '--scope', 'reports:read');
    expect(created.stderr).toBe('');
    const client = JSON.parse(created.stdout) as { client_id: string; client_secret: string };
    const token = await fetch(`${app.base}/oauth2/token`, {
      method: 'POST',
      headers: { authorization: `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64')}` },
      body: new URLSearchParams({ grant_type: 'client_credentials', client_id: client.client_id }),
    });
    const body = await token.json() as Record<string, unknown>;
    expect(token.status, JSON.stringify(body)).toBe(200);
    expect(body['scope']).toBe('reports:read');
    const metadata = await (await fetch(`${app.base}/.well-known/oauth-authorization-server`)).json() as { scopes_supported: string[] };
    expect(metadata.scopes_supported).toEqual(VOCABULARY.split(' '));
    expect(app.banner).toContain(`scopes:          ${VOCABULARY}  (give oauth-admin OAUTH_SCOPES="${VOCABULARY}")`);
  });

  it('a value leaving out a scope the app\'s routes require is refused: exit 2, one line, nothing registered', async () => {
    // Refused before it listens: the port is never bound.
    const port = await freePort();
    const failed = await new Promise<{ code: number | null; stderr: string }>((done) => {
      const child = spawn(process.execPath, [SERVER], {
        env: { ...process.env, OAUTH_STORE: storeUrl, DEMO_PASSWORD: 'demo-password-for-tests', OAUTH_SCOPES: 'envelopes:read', PORT: String(port) },
      });
      const limit = setTimeout(() => child.kill('SIGKILL'), 10_000);
      let stderr = '';
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => { stderr += chunk; });
      child.once('exit', (code) => {
        clearTimeout(limit);
        done({ code, stderr });
      });
    });
    expect(failed.code).toBe(2);
    expect(failed.stderr).toMatch(/^OAUTH_SCOPES leaves out envelopes:write, which this app's API requires .*\n$/);
    const listed = await runCliWith(['clients', 'list', '--json'], { env: { ...process.env, OAUTH_STORE: storeUrl } });
    // No store at all (exit 1, no_store) or an empty one: either way nothing was registered.
    if (listed.code === 0) expect(JSON.parse(listed.stdout)).toEqual([]);
  });
});
