// A first start of the built example app that fails (port taken, configuration refused) registers no demo integration.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bannerExport, runAdminCli, startAppProcess, stopAppProcesses } from '../helpers/example-app-processes.js';
import { freePort } from '../helpers/free-port.js';

const SERVER = resolve(import.meta.dirname, '../../example-app/dist/server.js');

/** A start that is refused exits within this; one that is not (the bug) is killed then, never left behind. */
const REFUSAL_LIMIT_MS = 10_000;

/** Runs the server until it exits by itself (or REFUSAL_LIMIT_MS, then killed: code null); its exit code and stderr. */
function runUntilExit(env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [SERVER], { env: { ...process.env, ...env } });
    const limit = setTimeout(() => child.kill('SIGKILL'), REFUSAL_LIMIT_MS);
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    child.once('exit', (code) => {
      clearTimeout(limit);
      done({ code, stderr });
    });
  });
}

describe('example app: a first start that fails', () => {
  let dir: string;
  let env: Record<string, string>;
  let blocker: Server | null = null;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'example-app-first-'));
    env = { OAUTH_STORE: `sqlite:${join(dir, 'oauth.sqlite')}`, DEMO_PASSWORD: 'demo-password-for-tests' };
  });

  afterEach(async () => {
    await stopAppProcesses();
    await new Promise<void>((done) => (blocker ? blocker.close(() => done()) : done()));
    blocker = null;
    rmSync(dir, { recursive: true, force: true });
  });

  /** The demo secrets exist only in the banner of the start that registers them: a failed start must not register. */
  async function expectNextStartShowsSecrets(): Promise<void> {
    const listed = await runAdminCli(env['OAUTH_STORE']!, ['clients', 'list', '--json']);
    // No store at all (exit 1, no_store) or an empty one: either way nothing was registered.
    if (listed.code === 0) expect(JSON.parse(listed.stdout)).toEqual([]);
    const next = await startAppProcess(env);
    expect(bannerExport(next.banner, 'CC_CLIENT_SECRET'), next.banner).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(bannerExport(next.banner, 'CODE_CLIENT_SECRET')).toMatch(/^[A-Za-z0-9_-]{43}$/);
  }

  it('on a port already taken exits 1 and registers nothing', async () => {
    // The test's own listener holds the port from the start (listen on 0), so nothing else can take it first.
    blocker = createServer();
    await new Promise<void>((done) => blocker!.listen(0, done));
    const { port } = blocker.address() as AddressInfo;
    const failed = await runUntilExit({ ...env, PORT: String(port) });
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain(`Cannot listen on port ${port}`);
    await expectNextStartShowsSecrets();
  });

  // Both defaults that name the port are computed before listening: they would read http://localhost:0.
  it.each([
    ['without AUTH_URL', {}],
    ['with AUTH_URL (the demo redirect URI names the port too)', { AUTH_URL: 'https://sign.example.com' }],
  ])('refuses PORT=0 %s: exits 2 with one line and registers nothing', async (_label, extra) => {
    const failed = await runUntilExit({ ...env, ...extra, PORT: '0' });
    expect(failed.code).toBe(2);
    expect(failed.stderr).toBe('PORT=0 (any free port) is not supported: AUTH_URL and the demo redirect URI name the port; choose one, e.g. PORT=3000\n');
    await expectNextStartShowsSecrets();
  });

  it('refused under NODE_ENV=production without SESSION_SECRET exits 2 and registers nothing', async () => {
    // Refused before it listens: the start never binds its PORT, so no one taking it meanwhile changes the outcome.
    const failed = await runUntilExit({ ...env, PORT: String(await freePort()), NODE_ENV: 'production' });
    expect(failed.code).toBe(2);
    expect(failed.stderr).toContain('session.secret');
    await expectNextStartShowsSecrets();
  });

  it('refused under NODE_ENV=production for a DEMO_PASSWORD a few guesses find exits 2 and registers nothing', async () => {
    const failed = await runUntilExit({
      ...env, PORT: String(await freePort()), NODE_ENV: 'production', SESSION_SECRET: 'a-session-secret-of-32-characters', DEMO_PASSWORD: 'choose-one',
    });
    expect(failed.code).toBe(2);
    expect(failed.stderr).toBe('DEMO_PASSWORD must be at least 15 characters when NODE_ENV=production (or leave it unset for a generated one, printed at start)\n');
    await expectNextStartShowsSecrets();
  });
});
