// One failed-or-not attempt at each rate-limited door, through HTTP: the sign-in form and client authentication.
import request from 'supertest';
import { basic, USER, type TestApp } from './app.js';
import { authorizeQuery, hiddenField } from './browser-flow.js';

/** Signs in at the login form of a fresh authorization request as the test user with `password`; the POST's status. */
export async function loginAttempt(t: TestApp, password: string): Promise<number> {
  const agent = request.agent(t.app);
  const page = await agent.get(`/oauth2/authorize?${authorizeQuery(t.codeClient)}`);
  const fields = { csrf_token: hiddenField(page.text, 'csrf_token'), request_id: hiddenField(page.text, 'request_id') };
  return (await agent.post('/oauth2/login').type('form').send({ ...fields, username: USER.username, password })).status;
}

/** A client_credentials request with HTTP Basic (SPEC §5.1); its status. */
export async function tokenAttempt(t: TestApp, clientId: string, clientSecret: string): Promise<number> {
  return (await request(t.app).post('/oauth2/token').set('Authorization', basic({ clientId, clientSecret })).type('form')
    .send({ grant_type: 'client_credentials' })).status;
}
