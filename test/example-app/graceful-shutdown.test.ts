// The example app on SIGTERM: a request in flight is answered, then the stores close and the process exits 0.
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { bannerExport, startAppProcess, stopAppProcesses } from '../helpers/example-app-processes.js';

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

/** How one request on the keep-alive agent ended: a whole response, or the error code of the connection. */
type Outcome = { readonly status: number; readonly connection: string | undefined; readonly body: string } | { readonly error: string };

/**
 * A token request through `agent` whose body is sent in two halves `gapMs` apart, as a slow client's would be:
 * the request stays in flight that long. `midway` runs once the first half is written.
 */
function slowTokenRequest(agent: Agent, port: number, authorization: string, gapMs: number, midway: () => void = () => undefined): Promise<Outcome> {
  const body = 'grant_type=client_credentials';
  return new Promise((resolve) => {
    const req = request({
      agent, host: '127.0.0.1', port, method: 'POST', path: '/oauth2/token',
      headers: { Authorization: authorization, 'Content-Type': 'application/x-www-form-urlencoded', 'Content-Length': body.length },
    }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (chunk: string) => { text += chunk; });
      res.once('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, body: text }));
      res.once('error', (err: NodeJS.ErrnoException) => resolve({ error: err.code ?? err.message }));
    });
    req.once('error', (err: NodeJS.ErrnoException) => resolve({ error: err.code ?? err.message }));
    req.write(body.slice(0, 10));
    midway();
    setTimeout(() => req.end(body.slice(10)), gapMs);
  });
}

/** GET `path` through `agent`: its status and Connection header, or the error code of the connection. */
function get(agent: Agent, port: number, path: string): Promise<Outcome> {
  return new Promise((resolve) => {
    const req = request({ agent, host: '127.0.0.1', port, path }, (res) => {
      res.resume();
      res.once('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, body: '' }));
      res.once('error', (err: NodeJS.ErrnoException) => resolve({ error: err.code ?? err.message }));
    });
    req.once('error', (err: NodeJS.ErrnoException) => resolve({ error: err.code ?? err.message }));
    req.end();
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
    const app = await startAppProcess({ OAUTH_STORE: `sqlite:${join(dir, 'oauth.sqlite')}`, DEMO_PASSWORD: 'demo-password-for-tests' });
    const { port } = app;
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
    // After the banner every line is JSON (example-app/README), the shutdown's included.
    const shutdown = stdout.split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as Record<string, unknown>)
      .find((line) => line['msg'] === 'shutting down');
    expect(shutdown).toMatchObject({ signal: 'SIGTERM', level: 30 });
  });

  it('16 keep-alive connections each sending request after request (as wrk does) see no reset at SIGTERM: answers, then ECONNREFUSED', { timeout: 60_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'graceful-'));
    dirs.push(dir);
    const app = await startAppProcess({ OAUTH_STORE: `sqlite:${join(dir, 'oauth.sqlite')}`, DEMO_PASSWORD: 'demo-password-for-tests' });
    const { port } = app;
    const exited = new Promise<number | null>((resolve) => app.child.once('exit', (code) => resolve(code)));
    const agent = new Agent({ keepAlive: true, maxSockets: 16 });
    try {
      let signalled = false;
      const loop = async (): Promise<Outcome[]> => {
        const outcomes: Outcome[] = [];
        const until = Date.now() + 15_000;
        while (Date.now() < until) {
          const outcome = await get(agent, port, '/health/live');
          outcomes.push(outcome);
          if ('error' in outcome && signalled) break;
        }
        return outcomes;
      };
      const loops = Array.from({ length: 16 }, loop);
      // Sequencing only: the signal goes once every connection is busy.
      await pause(500);
      signalled = true;
      app.child.kill('SIGTERM');
      const outcomes = (await Promise.all(loops)).flat();
      const errors = outcomes.filter((o): o is { error: string } => 'error' in o).map((o) => o.error);
      expect(outcomes.filter((o) => !('error' in o)).length, 'requests answered').toBeGreaterThan(16);
      expect(new Set(errors), 'refused once it stopped listening, never reset').toEqual(new Set(['ECONNREFUSED']));
      expect(await exited).toBe(0);
    } finally {
      agent.destroy();
    }
  });

  it('a busy keep-alive client is told Connection: close during the drain, so its next request is refused cleanly, never cut (README "requests in flight finish")', { timeout: 60_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'graceful-'));
    dirs.push(dir);
    const app = await startAppProcess({ OAUTH_STORE: `sqlite:${join(dir, 'oauth.sqlite')}`, DEMO_PASSWORD: 'demo-password-for-tests' });
    const { port } = app;
    const authorization = `Basic ${Buffer.from(`${bannerExport(app.banner, 'CC_CLIENT_ID')}:${bannerExport(app.banner, 'CC_CLIENT_SECRET')}`).toString('base64')}`;
    const exited = new Promise<number | null>((resolve) => app.child.once('exit', (code) => resolve(code)));
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      // Before the signal the connection is kept alive, as a client pool expects.
      const before = await slowTokenRequest(agent, port, authorization, 0);
      expect(before).toMatchObject({ status: 200, connection: 'keep-alive' });

      // In flight at SIGTERM, then request after request on the same agent, each in flight for 300 ms, until the
      // connection is refused or past the 5 s after which the app cuts what is still open.
      // Sequencing only: the signal goes 100 ms into the first one, once the server has read its headers.
      const outcomes: Outcome[] = [await slowTokenRequest(agent, port, authorization, 300, () => setTimeout(() => app.child.kill('SIGTERM'), 100))];
      const until = Date.now() + 8000;
      while (!('error' in outcomes.at(-1)!) && Date.now() < until) outcomes.push(await slowTokenRequest(agent, port, authorization, 300));

      const responses = outcomes.filter((o): o is Exclude<Outcome, { error: string }> => !('error' in o));
      const errors = outcomes.filter((o): o is { error: string } => 'error' in o).map((o) => o.error);
      expect(responses.length, 'the request in flight at SIGTERM is answered').toBeGreaterThan(0);
      for (const response of responses) {
        expect(response.status).toBe(200);
        expect(response.body).toContain('"access_token"');
        expect(response.connection, 'every response during the drain says Connection: close').toBe('close');
      }
      expect(errors, 'a request after the drain is refused, never reset half-way').toEqual(['ECONNREFUSED']);
      expect(await exited).toBe(0);
    } finally {
      agent.destroy();
    }
  });
});
