// A token request to a packed or bundled host, as an integration sends it: client_secret_basic, form body, 200 expected.
import { expect } from 'vitest';
import type { HostClient, RunningHost } from './packed-host.js';

/** RFC 6749 §2.3.1: client_secret_basic, the id and secret form-encoded before base64. */
function basic(client: HostClient): string {
  const pair = `${encodeURIComponent(client.clientId)}:${encodeURIComponent(client.clientSecret)}`;
  return `Basic ${Buffer.from(pair).toString('base64')}`;
}

/** POSTs `form` to the host's token endpoint (RFC 6749 §4.1.3, §4.4.2, §6) and returns the 200 answer's JSON. */
export async function tokenRequest(host: RunningHost, client: HostClient, form: Record<string, string>): Promise<Record<string, unknown>> {
  const res = await fetch(`${host.issuer}/oauth2/token`, {
    method: 'POST',
    headers: { Authorization: basic(client), 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form),
  });
  const body = (await res.json()) as Record<string, unknown>;
  expect(res.status, JSON.stringify(body)).toBe(200);
  return body;
}
