// The built example server in a child process: first-start credentials, then a restart that keeps tokens valid.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startOnFreePorts } from '../helpers/free-port.js';

function basic(clientId: string, secret: string): string {
  return `Basic ${Buffer.from(`${clientId}:${secret}`).toString('base64')}`;
}

describe('example app as a built server', () => {
  const SERVER = resolve(import.meta.dirname, '../../example-app/dist/server.js');
  let dir: string;
  const children: ChildProcessWithoutNullStreams[] = [];

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'example-app-'));
  });

  afterEach(() => {
    for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  /** Starts the server and resolves with everything it printed up to the end of its banner. */
  function start(port: number): Promise<{ port: number; child: ChildProcessWithoutNullStreams; stdout: string }> {
    const child = spawn(process.execPath, [SERVER], {
      cwd: dir,
      env: { ...process.env, PORT: String(port), OAUTH_STORE: `sqlite:${join(dir, 'oauth.sqlite')}`, DEMO_PASSWORD: 'demo-password-for-tests' },
    });
    children.push(child);
    return new Promise((done, fail) => {
      let stdout = '';
      let stderr = '';
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
        stdout += chunk;
        // The banner's last line: by then the server is listening.
        if (stdout.includes('Press Ctrl+C to stop.')) done({ port, child, stdout });
      });
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
        stderr += chunk;
      });
      // At 'close', once all of stderr is read: a lost port's EADDRINUSE is in the error, and the start is made again.
      child.once('close', (code) => fail(new Error(`server exited with ${code}: ${stderr}`)));
    });
  }

  function stop(child: ChildProcessWithoutNullStreams): Promise<number | null> {
    return new Promise((done) => {
      child.once('exit', (code) => done(code));
      child.kill('SIGTERM');
    });
  }

  it('prints the demo credentials once, and its tokens survive a restart', async () => {
    // A free port (another one if it was taken before the server bound it); the restart below reuses it.
    const first = await startOnFreePorts(1, ([free]) => start(free!));
    const { port } = first;
    const base = `http://localhost:${port}`;
    expect(first.stdout).toContain(`listening on ${base}`);
    const clientId = /export CC_CLIENT_ID=(\S+)/.exec(first.stdout)?.[1];
    const clientSecret = /export CC_CLIENT_SECRET=(\S+)/.exec(first.stdout)?.[1];
    const codeClientId = /export CODE_CLIENT_ID=(\S+)/.exec(first.stdout)?.[1];
    const codeSecret = /export CODE_CLIENT_SECRET=(\S+)/.exec(first.stdout)?.[1];
    expect(clientId).toBeDefined();
    expect(clientSecret).toBeDefined();
    expect(codeSecret).toBeDefined();
    expect(first.stdout).toContain(`${base}/oauth2/authorize?response_type=code&client_id=`);

    const tokenResponse = await fetch(`${base}/oauth2/token`, {
      method: 'POST',
      headers: { Authorization: basic(clientId!, clientSecret!), 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId! }),
    });
    expect(tokenResponse.status).toBe(200);
    const token = String(((await tokenResponse.json()) as Record<string, unknown>)['access_token']);
    const created = await fetch(`${base}/api/v1/envelopes`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ title: 'NDA' }),
    });
    expect(created.status).toBe(201);

    expect(await stop(first.child)).toBe(0);

    const second = await start(port);
    expect(second.stdout).toContain(clientId!);
    expect(second.stdout).not.toContain(clientSecret!);
    expect(second.stdout).not.toContain(codeSecret!);
    expect(second.stdout).not.toMatch(/SECRET=|client_secret:/i);
    // The demo ids are fixed names, so no 256-bit value (a secret) is printed at all.
    expect(second.stdout.match(/[A-Za-z0-9_-]{43}/g)).toBeNull();
    expect(second.stdout).toContain(codeClientId!);
    expect(second.stdout).toMatch(/not shown again/);

    const me = await fetch(`${base}/api/v1/me`, { headers: { Authorization: `Bearer ${token}` } });
    expect(me.status).toBe(200);
    expect(await me.json()).toMatchObject({ client_id: clientId, user_id: null });
    expect(await stop(second.child)).toBe(0);
  });
});
