// `oauth-admin clients create --auth-method`: an integration restricted to one client authentication method (RFC 7591 §2).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/run-cli.js';
import { basic, createTestApp } from '../helpers/app.js';
import { createSqliteStore } from '../../src/stores/sqlite/index.js';

let dir: string;
let storeFile: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'oauth-admin-auth-'));
  storeFile = join(dir, 'oauth.sqlite');
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

async function createJson(args: readonly string[]): Promise<Record<string, unknown>> {
  const result = await runCli(storeFile, ['clients', 'create', '--name', 'Partner', '--flow', 'client_credentials', ...args, '--json']);
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  return JSON.parse(result.stdout) as Record<string, unknown>;
}

describe('oauth-admin clients create --auth-method', () => {
  it('stores the method, shows it as token_endpoint_auth_method, and null when not given (any method)', async () => {
    const restricted = await createJson(['--auth-method', 'client_secret_post']);
    expect(restricted['token_endpoint_auth_method']).toBe('client_secret_post');
    const open = await createJson([]);
    expect(open).toHaveProperty('token_endpoint_auth_method', null);
    const listed = JSON.parse((await runCli(storeFile, ['clients', 'list', '--json'])).stdout) as Record<string, unknown>[];
    expect(listed.map((c) => c['token_endpoint_auth_method'])).toEqual(['client_secret_post', null]);
  });

  it('prints the method in the text output', async () => {
    const result = await runCli(storeFile, ['clients', 'create', '--name', 'Partner', '--flow', 'client_credentials', '--auth-method', 'client_secret_basic']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/auth method: +client_secret_basic\n/);
  });

  it('refuses a method it does not know, naming the choices, and registers nothing', async () => {
    const result = await runCli(storeFile, ['clients', 'create', '--name', 'Partner', '--flow', 'client_credentials', '--auth-method', 'private_key_jwt']);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/client_secret_basic/);
    expect(result.stderr).toMatch(/client_secret_post/);
    expect(result.stdout).toBe('');
    expect(result.stdout).not.toMatch(/client_secret:/);
  });

  it('the router holds the integration to its method: the other one is 401 invalid_client', async () => {
    const created = await createJson(['--auth-method', 'client_secret_post']);
    const client = { clientId: String(created['client_id']), clientSecret: String(created['client_secret']) };
    const store = createSqliteStore({ filename: storeFile });
    try {
      const t = await createTestApp({}, store);
      const viaPost = await request(t.app).post('/oauth2/token').type('form')
        .send({ grant_type: 'client_credentials', client_id: client.clientId, client_secret: client.clientSecret });
      expect(viaPost.status, viaPost.text).toBe(200);
      const viaBasic = await request(t.app).post('/oauth2/token').type('form').set('Authorization', basic(client))
        .send({ grant_type: 'client_credentials' });
      expect(viaBasic.status).toBe(401);
      expect(viaBasic.body.error).toBe('invalid_client');
    } finally {
      await store.close();
    }
  });
});
