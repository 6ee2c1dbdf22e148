// A custom store that breaks the Store contract is a 500 the operator hears of, never a wrong answer told as a right one.
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { basic, createTestApp } from '../helpers/app.js';
import { createMemoryStore } from '../../src/stores/memory/index.js';

describe('Store contract breaches seen by the token endpoint', () => {
  it.each([['undefined', undefined], ['null', null], ['1', 1]])('saveTokens resolving %s (not true or false) is a logged 500 server_error, not "the grant has been revoked"', async (_label, answer) => {
    const store = createMemoryStore();
    const errors: string[] = [];
    const t = await createTestApp({ logger: { warn() {}, error(line: string) { errors.push(line); } } }, store);
    const save = store.tokens.saveTokens.bind(store.tokens);
    store.tokens.saveTokens = async (...args) => {
      await save(...args);
      return answer as never;
    };
    const res = await request(t.app).post('/oauth2/token').set('Authorization', basic(t.credentialsClient)).type('form')
      .send({ grant_type: 'client_credentials' });
    expect(res.status).toBe(500);
    expect(res.body).toEqual({ error: 'server_error', error_description: 'the server encountered an unexpected condition' });
    expect(errors).toEqual([expect.stringMatching(/store\.tokens\.saveTokens resolved (undefined|null|number), not true or false/)]);
  });
});
