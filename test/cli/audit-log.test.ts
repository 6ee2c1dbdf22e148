// oauth-admin's audit trail (OAUTH_AUDIT_LOG): every change it makes is one JSON line appended to that file.
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCliWith, type CliResult } from '../helpers/run-cli.js';

let dir: string;
let storeFile: string;
let auditFile: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'oauth-admin-audit-'));
  storeFile = join(dir, 'oauth.sqlite');
  auditFile = join(dir, 'audit.log');
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** Runs the built CLI on this test's store, with OAUTH_AUDIT_LOG set to `audit` (unset when undefined). */
function run(audit: string | undefined, ...args: string[]): Promise<CliResult> {
  const { OAUTH_AUDIT_LOG: _ignored, ...env } = process.env;
  return runCliWith(args, { env: { ...env, OAUTH_STORE: `sqlite:${storeFile}`, ...(audit === undefined ? {} : { OAUTH_AUDIT_LOG: audit }) } });
}

/** A --json run that must succeed silently on stderr; its parsed stdout. */
async function ok(audit: string | undefined, ...args: string[]): Promise<Record<string, unknown>> {
  const result = await run(audit, ...args, '--json');
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  return JSON.parse(result.stdout) as Record<string, unknown>;
}

const auditLines = (): Record<string, unknown>[] =>
  readFileSync(auditFile, 'utf8').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Record<string, unknown>);

describe('oauth-admin audit log (README "Audit events": every security-relevant outcome is one typed event)', () => {
  it('a second clients disable of a disabled integration appends no second client.disabled, and says it was disabled already', async () => {
    const created = await ok(auditFile, 'clients', 'create', '--name', 'Acme', '--flow', 'client_credentials');
    const clientId = String(created['client_id']);
    expect(await ok(auditFile, 'clients', 'disable', clientId)).toEqual({ client_id: clientId, disabled: true, already_disabled: false });
    expect(await ok(auditFile, 'clients', 'disable', clientId)).toEqual({ client_id: clientId, disabled: true, already_disabled: true });
    expect(auditLines().map((l) => [l['event'], l['cause'] ?? null])).toEqual([
      ['client.created', null],
      ['client.disabled', null],
      ['token.revoked', 'client_disabled'],
      // The retry revoked again (finishing a revocation a failed first disable left), and reports that alone.
      ['token.revoked', 'client_disabled'],
    ]);
    const text = await run(auditFile, 'clients', 'disable', clientId);
    expect(text.stdout).toBe(`${clientId} was disabled already; its tokens are revoked again.\n`);
  });

  it('a clients enable of an enabled integration appends no client.enabled, and says it was enabled already', async () => {
    const created = await ok(auditFile, 'clients', 'create', '--name', 'Acme', '--flow', 'client_credentials');
    const clientId = String(created['client_id']);
    expect(await ok(auditFile, 'clients', 'enable', clientId)).toEqual({ client_id: clientId, disabled: false, already_enabled: true });
    await ok(auditFile, 'clients', 'disable', clientId);
    expect(await ok(auditFile, 'clients', 'enable', clientId)).toEqual({ client_id: clientId, disabled: false, already_enabled: false });
    expect(await ok(auditFile, 'clients', 'enable', clientId)).toEqual({ client_id: clientId, disabled: false, already_enabled: true });
    expect(auditLines().map((l) => [l['event'], l['cause'] ?? null])).toEqual([
      ['client.created', null],
      ['client.disabled', null],
      ['token.revoked', 'client_disabled'],
      // The retried enable changed nothing: no second line.
      ['client.enabled', null],
    ]);
    const text = await run(auditFile, 'clients', 'enable', clientId);
    expect(text.stdout).toBe(`${clientId} was enabled already; nothing changed.\n`);
  });

  it('create, rotate-secret, disable, enable, tokens revoke and delete each append their client.* / token.revoked line, never a secret', async () => {
    const created = await ok(auditFile, 'clients', 'create', '--name', 'Acme', '--flow', 'client_credentials');
    const clientId = String(created['client_id']);
    const rotated = await ok(auditFile, 'clients', 'rotate-secret', clientId);
    await ok(auditFile, 'clients', 'disable', clientId);
    await ok(auditFile, 'clients', 'enable', clientId);
    await ok(auditFile, 'tokens', 'revoke', '--client', clientId);
    await ok(auditFile, 'clients', 'delete', clientId, '--yes');

    const lines = auditLines();
    expect(lines.map((l) => [l['event'], l['cause'] ?? null])).toEqual([
      ['client.created', null],
      ['client.secret_rotated', null],
      ['token.revoked', 'client_secret_rotated'],
      ['client.disabled', null],
      ['token.revoked', 'client_disabled'],
      ['client.enabled', null],
      ['token.revoked', 'admin'],
      ['token.revoked', 'client_deleted'],
      ['client.deleted', null],
    ]);
    for (const line of lines) {
      // The example app's audit line shape (example-app/audit-log.ts, pino): level, ISO time, service, audit, event, fields, msg.
      expect(line).toMatchObject({ level: 30, service: 'oauth-admin', audit: true, clientId, issuer: null, ip: null, msg: line['event'] });
      expect(new Date(String(line['time'])).toISOString()).toBe(line['time']);
    }
    expect(lines[1]).toMatchObject({ previousSecretValidUntil: null });
    const text = readFileSync(auditFile, 'utf8');
    for (const secret of [created['client_secret'], rotated['client_secret']]) {
      expect(typeof secret).toBe('string');
      expect(text).not.toContain(String(secret));
    }
  });

  it('appends to an existing file (O_APPEND), never truncating it, and creates it readable by its owner only', async () => {
    writeFileSync(auditFile, '{"earlier":"line"}\n', { mode: 0o600 });
    await ok(auditFile, 'clients', 'create', '--name', 'Acme', '--flow', 'client_credentials');
    expect(readFileSync(auditFile, 'utf8').split('\n')[0]).toBe('{"earlier":"line"}');
    expect(auditLines().map((l) => l['event'] ?? 'earlier')).toEqual(['earlier', 'client.created']);

    const fresh = join(dir, 'fresh.log');
    await ok(fresh, 'clients', 'create', '--name', 'Beta', '--flow', 'client_credentials');
    expect(statSync(fresh).mode & 0o777).toBe(0o600);
  });

  it('clients import records each integration it creates as client.created with imported: true; a dry run records nothing', async () => {
    const file = join(dir, 'clients.jsonl');
    writeFileSync(file, `${JSON.stringify({ client_id: 'imported-one', client_secret: 'imported-secret-0123456789abcdef', name: 'Imported', flow: 'client_credentials', credentials_issued_at: '2020-06-01' })}\n`);
    await ok(auditFile, 'clients', 'import', file, '--dry-run');
    expect(existsSync(auditFile) ? readFileSync(auditFile, 'utf8') : '').toBe('');
    await ok(auditFile, 'clients', 'import', file);
    expect(auditLines()).toEqual([expect.objectContaining({ event: 'client.created', clientId: 'imported-one', imported: true })]);
    expect(readFileSync(auditFile, 'utf8')).not.toContain('imported-secret-0123456789abcdef');
  });

  it('a path that cannot be opened fails the command before anything changes (exit 1)', async () => {
    const result = await run(join(dir, 'no-such-dir', 'audit.log'), 'clients', 'create', '--name', 'Acme', '--flow', 'client_credentials', '--json');
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stderr)).toMatchObject({ error: 'failure' });
    expect(existsSync(storeFile)).toBe(false);
  });

  it('reads and dry runs record nothing, so a path that cannot be opened does not fail them: list, show, import --dry-run', async () => {
    const created = await ok(undefined, 'clients', 'create', '--name', 'Acme', '--flow', 'client_credentials');
    const unwritable = join(dir, 'no-such-dir', 'audit.log');
    expect(await ok(unwritable, 'clients', 'list')).toEqual([expect.objectContaining({ client_id: created['client_id'] })]);
    expect(await ok(unwritable, 'clients', 'show', String(created['client_id']))).toMatchObject({ client_id: created['client_id'] });
    const file = join(dir, 'clients.jsonl');
    writeFileSync(file, `${JSON.stringify({ client_id: 'imported-two', client_secret: 'imported-secret-0123456789abcdef', name: 'Imported', flow: 'client_credentials', credentials_issued_at: '2020-06-01' })}\n`);
    expect(await ok(unwritable, 'clients', 'import', file, '--dry-run')).toMatchObject({ dry_run: true });
    // A change still needs the file.
    expect((await run(unwritable, 'clients', 'disable', String(created['client_id']), '--json')).code).toBe(1);
  });

  it('without OAUTH_AUDIT_LOG nothing new is printed: stdout is the result alone, stderr stays empty', async () => {
    const created = await run(undefined, 'clients', 'create', '--name', 'Acme', '--flow', 'client_credentials', '--json');
    expect(created.stderr).toBe('');
    const clientId = String((JSON.parse(created.stdout) as Record<string, unknown>)['client_id']);
    const disabled = await run(undefined, 'clients', 'disable', clientId, '--json');
    expect({ code: disabled.code, stdout: disabled.stdout, stderr: disabled.stderr })
      .toEqual({ code: 0, stdout: `${JSON.stringify({ client_id: clientId, disabled: true, already_disabled: false }, null, 2)}\n`, stderr: '' });
  });
});

describe('oauth-admin audit log that cannot take a line after the change (a full disk)', () => {
  it('the change stands (exit 0), and stderr warns in the format asked for: JSON lines with --json, one text line without', async () => {
    const json = await run('/dev/full', 'clients', 'create', '--name', 'Acme', '--flow', 'client_credentials', '--json');
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ name: 'Acme' });
    const warnings = json.stderr.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(warnings).toEqual([{ warning: 'audit_log_write_failed', message: expect.stringMatching(/^could not write to OAUTH_AUDIT_LOG \/dev\/full: .*ENOSPC.*the change was made but is not in the audit trail$/) }]);
    const text = await run('/dev/full', 'clients', 'create', '--name', 'Beta', '--flow', 'client_credentials');
    expect(text.code).toBe(0);
    expect(text.stderr).toMatch(/^oauth-admin: could not write to OAUTH_AUDIT_LOG \/dev\/full: .*the change was made but is not in the audit trail\n$/);
  });
});
