// Sign-ins kept in one process's memory: a process that is one of several (node:cluster, pm2) is warned once, at the first page that uses them.
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import express from 'express';
import session from 'express-session';
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { createOAuthRouter } from '../../src/router.js';
import { createMemoryStore } from '../../src/stores/memory/index.js';
import { registerClient } from '../../src/clients/register-client.js';
import { MemorySessionStore } from '../../src/http/memory-session-store.js';
import { oneOfSeveralProcesses } from '../../src/http/several-processes.js';
import type { OAuthRouterOptions } from '../../src/options.js';
import { ISSUER, REDIRECT_URI, createTestUserAuth } from '../helpers/app.js';
import { authorizeQuery } from '../helpers/browser-flow.js';

const SEVERAL_WARNING = /login sessions are kept in this process's memory \((?:no session\.store|session\.store is a memory store)\), but this process is (.+?): .*session\.store/;
const SECRET = 'router-session-secret-0123456789';

async function createHost(options: Partial<OAuthRouterOptions> = {}, hostSession = false) {
  const lines: string[] = [];
  const logger = { warn: (m: string) => { lines.push(`warn: ${m}`); }, error: (m: string) => { lines.push(`error: ${m}`); } };
  const store = createMemoryStore();
  const code = await registerClient(store, { name: 'Acme CRM', flow: 'authorization_code', redirectUris: [REDIRECT_URI] });
  const oauth = createOAuthRouter(store, createTestUserAuth(new Set()), { issuer: ISSUER, logger, session: { secret: SECRET }, ...options });
  const app = express();
  if (hostSession) app.use(session({ secret: 'host-session-secret-0123456789', resave: false, saveUninitialized: false }));
  app.use(oauth.router);
  const page = () => request(app).get(`/oauth2/authorize?${authorizeQuery({ clientId: code.client.clientId, clientSecret: code.clientSecret })}`);
  return { lines, page };
}

describe('in-memory sessions in one of several processes', () => {
  const saved = process.env.NODE_APP_INSTANCE;
  afterEach(() => {
    if (saved === undefined) delete process.env.NODE_APP_INSTANCE;
    else process.env.NODE_APP_INSTANCE = saved;
  });

  it('tells a node:cluster worker, and a pm2 instance past the first, from a single process', () => {
    expect(oneOfSeveralProcesses({}, true)).toBe('a node:cluster worker');
    expect(oneOfSeveralProcesses({ NODE_APP_INSTANCE: '2' }, false)).toBe('pm2 instance 2');
    expect(oneOfSeveralProcesses({ NODE_APP_INSTANCE: '0' }, false)).toBeNull();
    expect(oneOfSeveralProcesses({ NODE_APP_INSTANCE: '' }, false)).toBeNull();
    expect(oneOfSeveralProcesses({}, false)).toBeNull();
  });

  it('a pm2 instance past the first is warned once, at the first page that uses the router\'s own sessions', async () => {
    process.env.NODE_APP_INSTANCE = '1';
    const host = await createHost();
    expect(host.lines).toEqual([]);
    for (let i = 0; i < 3; i += 1) expect((await host.page()).status).toBe(200);
    expect(host.lines).toHaveLength(1);
    expect(host.lines[0]).toMatch(SEVERAL_WARNING);
    expect(SEVERAL_WARNING.exec(host.lines[0]!)![1]).toBe('pm2 instance 1');
  });

  it('a real node:cluster worker is warned once', async () => {
    const fixture = fileURLToPath(new URL('./cluster-worker-host.ts', import.meta.url));
    const child = fork(fixture, [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    const lines = await new Promise<string[]>((resolve, reject) => {
      child.once('message', (message) => resolve(message as string[]));
      child.once('exit', (code) => reject(new Error(`the cluster host exited (${code}) before it reported`)));
    });
    await new Promise((resolve) => child.once('exit', resolve));
    expect(lines).toHaveLength(1);
    expect(SEVERAL_WARNING.exec(lines[0]!)?.[1]).toBe('a node:cluster worker');
  });

  it('is given for a session.store kept in memory too (MemorySessionStore, express-session\'s MemoryStore)', async () => {
    process.env.NODE_APP_INSTANCE = '1';
    for (const store of [new MemorySessionStore(), new session.MemoryStore()]) {
      const host = await createHost({ session: { secret: SECRET, store } });
      await host.page();
      expect(host.lines).toHaveLength(1);
      expect(host.lines[0]).toContain('(session.store is a memory store)');
    }
  });

  it('is not given to a single process, nor with a shared session.store, nor to a host running its own express-session', async () => {
    delete process.env.NODE_APP_INSTANCE;
    const single = await createHost();
    await single.page();
    expect(single.lines).toEqual([]);

    process.env.NODE_APP_INSTANCE = '1';
    // Any other express-session store counts as shared (connect-redis, connect-pg-simple): the router cannot tell.
    const kept = new Map<string, session.SessionData>();
    class ExternalStore extends session.Store {
      get(sid: string, done: (err: unknown, data?: session.SessionData | null) => void) { done(null, kept.get(sid) ?? null); }
      set(sid: string, data: session.SessionData, done?: (err?: unknown) => void) { kept.set(sid, data); done?.(); }
      destroy(sid: string, done?: (err?: unknown) => void) { kept.delete(sid); done?.(); }
    }
    const shared = await createHost({ session: { secret: SECRET, store: new ExternalStore() } });
    await shared.page();
    expect(shared.lines).toEqual([]);

    const hosted = await createHost({}, true);
    expect((await hosted.page()).status).toBe(200);
    expect(hosted.lines).toEqual([]);
  });
});
