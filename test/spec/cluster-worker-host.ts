// A node:cluster primary forking one worker that serves the router on its in-memory sessions and reports the log lines of one sign-in page.
import cluster from 'node:cluster';
import express from 'express';
import request from 'supertest';
import { createOAuthRouter } from '../../src/router.js';
import { createMemoryStore } from '../../src/stores/memory/index.js';
import { registerClient } from '../../src/clients/register-client.js';
import { ISSUER, REDIRECT_URI, createTestUserAuth } from '../helpers/app.js';
import { authorizeQuery } from '../helpers/browser-flow.js';

if (cluster.isPrimary) {
  cluster.setupPrimary({ execArgv: ['--import', 'tsx'] });
  const worker = cluster.fork();
  worker.on('message', (lines: string[]) => {
    process.send!(lines);
    worker.disconnect();
  });
} else {
  const lines: string[] = [];
  const logger = { warn: (m: string) => { lines.push(`warn: ${m}`); }, error: (m: string) => { lines.push(`error: ${m}`); } };
  const store = createMemoryStore();
  const code = await registerClient(store, { name: 'Acme CRM', flow: 'authorization_code', redirectUris: [REDIRECT_URI] });
  const oauth = createOAuthRouter(store, createTestUserAuth(new Set()), {
    issuer: ISSUER, logger, session: { secret: 'router-session-secret-0123456789' },
  });
  const app = express();
  app.use(oauth.router);
  const client = { clientId: code.client.clientId, clientSecret: code.clientSecret };
  for (let i = 0; i < 2; i += 1) {
    const page = await request(app).get(`/oauth2/authorize?${authorizeQuery(client)}`);
    if (page.status !== 200) lines.push(`status ${page.status}`);
  }
  store.close?.();
  process.send!(lines);
}
