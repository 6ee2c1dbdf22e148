// The built example app logs every audit event as a pino JSON line and never a secret, code, token or password:
// every flow runs against the real process, then every line it printed is searched for every credential seen.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAdminCli } from '../helpers/example-app-processes.js';
import { startOnFreePorts } from '../helpers/free-port.js';

const SERVER = resolve(import.meta.dirname, '../../example-app/dist/server.js');
const REDIRECT_URI = 'https://client.example/cb';
const USERNAME = 'audit-user';
const PASSWORD = 'Audit-Password-Nobody-Logs-7f3c9a';

/** A cookie-keeping fetch against one origin, as a browser is for the login and consent forms. */
class Browser {
  private readonly cookies = new Map<string, string>();
  constructor(private readonly base: string) {}
  async go(path: string, form?: Record<string, string>): Promise<Response> {
    const res = await fetch(new URL(path, this.base), {
      redirect: 'manual',
      headers: { Cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; '), ...(form ? { 'Content-Type': 'application/x-www-form-urlencoded' } : {}) },
      ...(form ? { method: 'POST', body: new URLSearchParams(form) } : {}),
    });
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair!.indexOf('=');
      this.cookies.set(pair!.slice(0, eq).trim(), pair!.slice(eq + 1).trim());
    }
    return res;
  }
  cookieValues(): string[] {
    return [...this.cookies.values()];
  }
}

function hidden(html: string, name: string): string {
  const match = new RegExp(`name="${name}" value="([^"]*)"`).exec(html);
  if (!match) throw new Error(`no ${name} on the page`);
  return match[1]!;
}

function basic(clientId: string, secret: string): string {
  return `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(secret)}`).toString('base64')}`;
}

interface Registered {
  readonly clientId: string;
  readonly clientSecret: string;
}

/** Registers an integration with the admin CLI (its output is the CLI's, not the app's). */
async function register(storeUrl: string, args: string[]): Promise<Registered> {
  const run = await runAdminCli(storeUrl, ['clients', 'create', '--json', ...args]);
  expect(run.code, run.stderr).toBe(0);
  const json = JSON.parse(run.stdout) as { client_id: string; client_secret: string };
  return { clientId: json.client_id, clientSecret: json.client_secret };
}

describe('example app audit log', () => {
  let dir: string;
  let child: ChildProcessWithoutNullStreams;
  let output = '';
  let base = '';
  /** Every secret, code, token, password and cookie the flows saw. */
  const secrets = new Set<string>([PASSWORD]);
  let codeClient: Registered;
  let ccClient: Registered;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'audit-log-'));
    const storeUrl = `sqlite:${join(dir, 'oauth.sqlite')}`;
    codeClient = await register(storeUrl, ['--name', 'Audit Web', '--flow', 'authorization_code', '--redirect-uri', REDIRECT_URI, '--scope', 'envelopes:read']);
    ccClient = await register(storeUrl, ['--name', 'Audit Sync', '--flow', 'client_credentials']);
    secrets.add(codeClient.clientSecret).add(ccClient.clientSecret);
    secrets.add('audit-session-secret-0123456789abcdef');
    // On a free port, and on another if that one was taken before the app bound it (EADDRINUSE).
    await startOnFreePorts(1, ([port]) => {
      // A try that lost its port read all its lines before it failed (at 'close'): none of them is kept.
      output = '';
      base = `http://localhost:${port}`;
      child = spawn(process.execPath, [SERVER], {
        cwd: dir,
        env: { ...process.env, PORT: String(port), OAUTH_STORE: storeUrl, DEMO_USERNAME: USERNAME, DEMO_PASSWORD: PASSWORD, SESSION_SECRET: 'audit-session-secret-0123456789abcdef' },
      });
      return new Promise<void>((done, fail) => {
        child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
          output += chunk;
          if (output.includes('Press Ctrl+C to stop.')) done();
        });
        child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
          output += chunk;
        });
        child.once('close', (code) => fail(new Error(`the example app exited with ${code}: ${output}`)));
      });
    });
  });

  afterAll(async () => {
    if (child && child.exitCode === null) {
      await new Promise((done) => {
        child.once('exit', done);
        child.kill('SIGKILL');
      });
    }
    rmSync(dir, { recursive: true, force: true });
  });

  async function token(client: Registered, form: Record<string, string>): Promise<Record<string, unknown>> {
    const res = await fetch(`${base}/oauth2/token`, {
      method: 'POST', headers: { Authorization: basic(client.clientId, client.clientSecret), 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(form),
    });
    const body = await res.json() as Record<string, unknown>;
    for (const key of ['access_token', 'refresh_token']) if (typeof body[key] === 'string') secrets.add(body[key] as string);
    return { status: res.status, ...body };
  }

  async function revoke(value: string): Promise<number> {
    const res = await fetch(`${base}/oauth2/revoke`, {
      method: 'POST', headers: { Authorization: basic(codeClient.clientId, codeClient.clientSecret), 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: value }),
    });
    return res.status;
  }

  /** Opens the authorization request; signs in (a wrong password and a forged form first) unless already signed in; allows. */
  async function authorize(browser: Browser, signIn: boolean): Promise<string> {
    const query = new URLSearchParams({ response_type: 'code', client_id: codeClient.clientId, redirect_uri: REDIRECT_URI, state: 's-1', scope: 'envelopes:read' });
    let page = await browser.go(`/oauth2/authorize?${query}`);
    if (signIn) {
      const html = await page.text();
      const form = { csrf_token: hidden(html, 'csrf_token'), request_id: hidden(html, 'request_id'), username: USERNAME };
      secrets.add(form.csrf_token);
      const wrongPassword = `${PASSWORD}-wrong`;
      secrets.add(wrongPassword);
      expect((await browser.go('/oauth2/login', { ...form, password: wrongPassword })).status).toBe(400);
      expect((await browser.go('/oauth2/login', { ...form, csrf_token: 'forged', password: PASSWORD })).status).toBe(403);
      const signedIn = await browser.go('/oauth2/login', { ...form, password: PASSWORD });
      expect(signedIn.status).toBe(303);
      page = await browser.go(signedIn.headers.get('location')!);
    }
    let location: string;
    if (page.status === 302) location = page.headers.get('location')!;
    else {
      expect(page.status).toBe(200);
      const html = await page.text();
      secrets.add(hidden(html, 'csrf_token'));
      const decided = await browser.go('/oauth2/consent', { csrf_token: hidden(html, 'csrf_token'), request_id: hidden(html, 'request_id'), decision: 'allow' });
      expect(decided.status).toBe(303);
      location = decided.headers.get('location')!;
    }
    const code = new URL(location).searchParams.get('code');
    expect(code).toBeTruthy();
    secrets.add(code!);
    return code!;
  }

  it('every flow writes its audit events as JSON lines, and no line holds any secret, code, token, password or cookie the flows saw', async () => {
    const browser = new Browser(base);
    // Authorization code with login and consent, exchange, refresh, then the code again (replay).
    const code = await authorize(browser, true);
    const issued = await token(codeClient, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI });
    expect(issued.status).toBe(200);
    expect((await token(codeClient, { grant_type: 'refresh_token', refresh_token: issued.refresh_token as string })).status).toBe(200);
    expect((await token(codeClient, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI })).status).toBe(400);
    // A second code (consent remembered), its tokens revoked one by one at the revocation endpoint.
    const second = await token(codeClient, { grant_type: 'authorization_code', code: await authorize(browser, false), redirect_uri: REDIRECT_URI });
    expect(second.status).toBe(200);
    expect(await revoke(second.access_token as string)).toBe(200);
    expect(await revoke(second.refresh_token as string)).toBe(200);
    // Client credentials, then wrong secrets until the client-authentication limit (20 per client and source) answers 429.
    expect((await token(ccClient, { grant_type: 'client_credentials' })).status).toBe(200);
    const wrong = { clientId: ccClient.clientId, clientSecret: `${ccClient.clientSecret.slice(0, -6)}WRONG1` };
    secrets.add(wrong.clientSecret);
    const statuses: unknown[] = [];
    for (let i = 0; i < 21; i += 1) statuses.push((await token(wrong, { grant_type: 'client_credentials' })).status);
    expect(statuses.at(0)).toBe(401);
    expect(statuses.at(-1)).toBe(429);
    // A wrong secret at the introspection endpoint, from a fresh client_id (the limit above is per client_id).
    const introspected = await fetch(`${base}/oauth2/introspect`, {
      method: 'POST', headers: { Authorization: basic(codeClient.clientId, wrong.clientSecret), 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: second.access_token as string }),
    });
    expect(introspected.status).toBe(401);
    // Consent withdrawal on the connected-applications page.
    const page = await browser.go('/oauth2/consents');
    expect(page.status).toBe(200);
    const withdraw = await browser.go('/oauth2/consents/withdraw', { csrf_token: hidden(await page.text(), 'csrf_token'), client_id: codeClient.clientId });
    expect(withdraw.status).toBe(303);
    for (const value of browser.cookieValues()) secrets.add(decodeURIComponent(value));

    // Stop the app so every line is flushed, then read all of it.
    await new Promise((done) => {
      child.once('exit', done);
      child.kill('SIGTERM');
    });
    const lines = output.split('\n');
    for (const secret of secrets) {
      expect(secret.length).toBeGreaterThanOrEqual(16);
      for (const fragment of [secret, encodeURIComponent(secret), secret.slice(0, 16)]) {
        const hit = lines.find((line) => line.includes(fragment));
        expect(hit, `a logged line holds a credential: ${hit}`).toBeUndefined();
      }
    }

    const audit = lines.filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as Record<string, unknown>).filter((entry) => entry.audit === true);
    const has = (event: string, fields: Record<string, unknown> = {}) =>
      expect(audit.some((entry) => entry.event === event && Object.entries(fields).every(([k, v]) => entry[k] === v)), `${event} ${JSON.stringify(fields)}`).toBe(true);
    const issuer = base;
    has('login.failed', { reason: 'bad_credentials', clientId: codeClient.clientId, issuer });
    has('login.failed', { reason: 'csrf' });
    has('login.succeeded', { clientId: codeClient.clientId, issuer });
    has('consent.granted', { clientId: codeClient.clientId });
    has('token.issued', { grantType: 'authorization_code', clientId: codeClient.clientId, refreshToken: true });
    has('token.refreshed', { clientId: codeClient.clientId });
    has('code.replayed', { clientId: codeClient.clientId });
    has('token.revoked', { cause: 'code_replay', extent: 'grant' });
    has('token.revoked', { cause: 'revocation_endpoint', extent: 'token' });
    has('token.revoked', { cause: 'revocation_endpoint', extent: 'grant' });
    has('token.issued', { grantType: 'client_credentials', clientId: ccClient.clientId, userId: null });
    has('client.authentication_failed', { endpoint: 'token', reason: 'wrong_secret', clientId: ccClient.clientId });
    has('rate_limit.hit', { limit: 'client_authentication', clientId: null });
    has('client.authentication_failed', { endpoint: 'introspection', reason: 'wrong_secret', clientId: codeClient.clientId });
    has('consent.withdrawn', { clientId: codeClient.clientId });
    has('token.revoked', { cause: 'consent_withdrawn', extent: 'user', clientId: codeClient.clientId });
    // Every audit line is a pino line with the level, the time, the source address and the event's name as msg.
    for (const entry of audit) expect(entry).toMatchObject({ level: 30, time: expect.any(String), msg: entry.event, ip: expect.any(String) });
  });
});
