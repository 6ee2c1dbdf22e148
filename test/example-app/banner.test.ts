// The example app's start-up banner: the commands it prints reach the app at the address clients use.
import { describe, expect, it } from 'vitest';
import { formatBanner, type BannerInput } from '../../example-app/banner.js';

const SECRET = 'S'.repeat(43);

function banner(authUrl: string): string {
  const input: BannerInput = {
    listenUrl: 'http://localhost:3000', authUrl, legacyAuthUrl: `${authUrl}/legacy`, storeUrl: 'memory:',
    username: 'demo', generatedPassword: null, redirectUri: 'http://localhost:3000/demo/callback',
    demo: {
      created: true, total: 2,
      clientCredentials: { clientId: 'acme-sign-demo-backend', clientSecret: SECRET },
      code: { clientId: 'acme-sign-demo-web', clientSecret: SECRET },
    },
  };
  return formatBanner(input);
}

describe('the banner', () => {
  it('without AUTH_URL sends every command to the address it listens on', () => {
    const text = banner('http://localhost:3000');
    expect(text).toContain("-d '{\"title\":\"NDA\"}' http://localhost:3000/api/v1/envelopes");
    expect(text).toContain('http://localhost:3000/oauth2/token');
  });

  it('with AUTH_URL naming a proxy sends the API calls there too, not to the direct address', () => {
    const text = banner('https://sign.example.com');
    expect(text).toContain('listening on http://localhost:3000');
    const commands = text.split('\n').filter((line) => line.includes('curl -s'));
    expect(commands).toHaveLength(3);
    for (const command of commands) expect(command).not.toContain('http://localhost:3000');
    expect(commands.join('\n')).toContain('https://sign.example.com/api/v1/envelopes');
    expect(text).toContain('API:             GET|POST https://sign.example.com/api/v1/envelopes, GET https://sign.example.com/api/v1/me');
  });

  it('with AUTH_URL on a path puts the API at the root of its origin, where the app serves it', () => {
    const text = banner('https://example.com/sign');
    expect(text).toContain('https://example.com/sign/oauth2/token');
    expect(text).toContain('https://example.com/api/v1/envelopes');
    expect(text).not.toContain('/sign/api/v1');
  });
});
