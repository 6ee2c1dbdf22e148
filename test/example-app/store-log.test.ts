// The example app's stores log through its JSON logger: a dropped database connection is one JSON line on stdout.
import pg from 'pg';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startAppProcess, stopAppProcesses } from '../helpers/example-app-processes.js';

const PG_URL = process.env.OAUTH_TEST_POSTGRES_URL ?? '';

describe.skipIf(!PG_URL)('example app store warnings (example-app/README "Logs": one JSON object per line on stdout)', () => {
  afterEach(() => stopAppProcesses());

  it('PostgreSQL dropping the app\'s connections is logged as JSON lines with message and code, nothing on stderr, no connection object', { timeout: 60_000 }, async () => {
    const tag = `eor-applog-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
    const schema = tag.replace(/-/g, '_');
    const storeUrl = `${PG_URL}${PG_URL.includes('?') ? '&' : '?'}schema=${schema}&application_name=${tag}`;
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    try {
      const app = await startAppProcess({ OAUTH_STORE: storeUrl, DEMO_PASSWORD: 'demo-password-for-tests' });
      let after = '';
      let stderr = '';
      app.child.stdout.on('data', (chunk: string) => { after += chunk; });
      app.child.stderr.on('data', (chunk: string) => { stderr += chunk; });
      // The OAuth store's pool and the session store's pool both hold idle connections after the seeding.
      const { rowCount } = await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1', [tag]);
      expect(rowCount).toBeGreaterThan(0);
      await vi.waitFor(() => expect(after).toContain('connection lost'), { timeout: 10_000, interval: 50 });
      // A moment for any further warning (a second pool, the revocation feed) to be written too.
      await new Promise((resolve) => setTimeout(resolve, 500));

      expect(stderr).toBe('');
      const lines = after.split('\n').filter((l) => l !== '');
      const records = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
      const warnings = records.filter((r) => r['component'] === 'store');
      expect(warnings.length).toBeGreaterThan(0);
      for (const warning of warnings) {
        expect(warning['level']).toBe(40);
        expect(warning['msg']).toMatch(/connection lost|revocation feed/);
        // The feed's return is told too, with no error to show.
        if (String(warning['msg']).includes('revocation feed back')) expect(warning['error']).toBeUndefined();
        else expect(warning['error']).toEqual({ message: 'terminating connection due to administrator command', code: '57P01' });
      }
      expect(after).not.toMatch(/secretKey|processID|connectionParameters/);
    } finally {
      await stopAppProcesses();
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await admin.end();
    }
  });
});
