// The example app on SIGTERM: a request in flight is answered, then the stores close and the process exits 0.
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { bannerExport, freePort, startAppProcess, stopAppProcesses } from '../helpers/example-app-processes.js';

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Everything the server sends on `socket` until it closes the connection. */
function readAll(socket: Socket): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    socket.setEncoding('utf8').on('data', (chunk: string) => {
      text += chunk;
    });
    socket.once('error', reject);
    socket.once('close', () => resolve(text));
  });
}

describe('example app graceful shutdown', () => {
  const dirs: string[] = [];
  afterEach(async () => {
    await stopAppProcesses();
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('answers a token request in flight at SIGTERM, then closes the store and exits 0', { timeout: 60_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'graceful-'));
    dirs.push(dir);
    const port = await freePort();
    const app = await startAppProcess(port, { OAUTH_STORE: `sqlite:${join(dir, 'oauth.sqlite')}`, DEMO_PASSWORD: 'demo-password-for-tests' });
    const clientId = bannerExport(app.banner, 'CC_CLIENT_ID');
    const secret = bannerExport(app.banner, 'CC_CLIENT_SECRET');
    expect(clientId).not.toBeNull();
    let stdout = '';
    app.child.stdout.on('data', (chunk: string) => {
      stdout += chunk;
    });
    const exited = new Promise<number | null>((resolve) => app.child.once('exit', (code) => resolve(code)));

    const body = 'grant_type=client_credentials';
    const socket = connect(port, '127.0.0.1');
    const response = readAll(socket);
    await new Promise((resolve) => socket.once('connect', resolve));
    // The headers and half the body: the request is under way, and stays so until the rest comes.
    socket.write(
      `POST /oauth2/token HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n` +
        `Authorization: Basic ${Buffer.from(`${clientId}:${secret}`).toString('base64')}\r\n` +
        `Content-Type: application/x-www-form-urlencoded\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 10)}`,
    );
    // Sequencing only (no assertion on time): let the server read the headers before the signal.
    await pause(300);
    app.child.kill('SIGTERM');
    await pause(300);
    socket.end(body.slice(10));

    const answer = await response;
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
    expect(answer).toContain('"access_token"');
    expect(await exited).toBe(0);
    expect(stdout).toContain('SIGTERM: shutting down');
  });
});
