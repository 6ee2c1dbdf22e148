// The packed package installed by pnpm 10 (strict, symlinked node_modules; dependency build scripts blocked by default).
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ESM_JS_HOST, OPEN_SQLITE_STORE, TS_HOST, hostTsconfig } from './host-sources.js';
import { ROOT, packPackage, run, startHost, typeCheck, type RunningHost } from './packed-host.js';
import { tokenRequest } from './host-token-request.js';

/** pnpm 10 through npm's own exec (from npm's cache when it has it); null when the registry and the cache both fail. */
async function findPnpm(): Promise<string[] | null> {
  const pnpm = ['exec', '--yes', '--prefer-offline', '--package=pnpm@10', '--', 'pnpm'];
  const version = await run('npm', [...pnpm, '--version'], tmpdir());
  return version.code === 0 && /^10\./.test(version.stdout.trim()) ? pnpm : null;
}
const PNPM = await findPnpm();

const NOT_BUILT_UNDER_PNPM = "The SQLite store's better-sqlite3 is installed but not built (its install script did not run): "
  + 'pnpm approve-builds better-sqlite3 (pnpm 10 lists it for you to pick; on pnpm 9, pnpm rebuild better-sqlite3)';

let work: string;
let hostDir: string;
let host: RunningHost | undefined;

describe.skipIf(PNPM === null)('a host installed by pnpm 10 (better-sqlite3 left unbuilt, as pnpm 10 leaves it)', () => {
  beforeAll(async () => {
    if (!existsSync(join(ROOT, 'dist', 'index.js'))) throw new Error('dist/ is missing: run `npm run build` first');
    work = await mkdtemp(join(tmpdir(), 'eor-pnpm-'));
    hostDir = join(work, 'pnpm10');
    const tarball = await packPackage(work);
    await mkdir(hostDir);
    await writeFile(join(hostDir, 'package.json'), JSON.stringify({ name: 'host-pnpm10', private: true, type: 'module' }));
    for (const [file, text] of Object.entries({
      'server.mjs': ESM_JS_HOST, 'open-store.mjs': OPEN_SQLITE_STORE, 'server.ts': TS_HOST,
      'tsconfig.json': hostTsconfig('nodenext', ['server.ts'], false),
    })) await writeFile(join(hostDir, file), text);
    const added = await run('npm', [
      ...PNPM!, 'add', '--prefer-offline', tarball, 'express@5', '@types/express@5', 'better-sqlite3@12',
    ], hostDir);
    expect(added.code, added.stdout + added.stderr).toBe(0);
    expect(added.stdout).toContain('Ignored build scripts: better-sqlite3');
    host = await startHost(hostDir, 'server.mjs');
  }, 180_000);

  afterAll(async () => {
    host?.stop();
    if (work) await rm(work, { recursive: true, force: true });
  });

  it('lays the package out strictly: its dependencies are not hoisted next to the host', () => {
    expect(existsSync(join(hostDir, 'node_modules', '.pnpm'))).toBe(true);
    expect(existsSync(join(hostDir, 'node_modules', 'commander'))).toBe(false);
  });

  it('client_credentials with Basic gets a token the requireBearer route accepts (RFC 6749 §4.4, RFC 6750 §2.1)', async () => {
    const token = await tokenRequest(host!, host!.machine, { grant_type: 'client_credentials' });
    const res = await fetch(`${host!.issuer}/api/me`, { headers: { Authorization: `Bearer ${String(token['access_token'])}` } });
    expect({ status: res.status, body: await res.json() }).toEqual({ status: 200, body: { clientId: host!.machine.clientId, userId: null } });
  });

  it('opening the SQLite store under plain node says pnpm approve-builds, and creates nothing', async () => {
    const result = await run(process.execPath, ['open-store.mjs'], hostDir);
    expect(result.stdout.trim(), result.stderr).toBe(NOT_BUILT_UNDER_PNPM);
    expect(existsSync(join(hostDir, 'data'))).toBe(false);
  });

  it('oauth-admin says the same through pnpm exec and through npx', async () => {
    const viaPnpm = await run('npm', [...PNPM!, 'exec', 'oauth-admin', 'clients', 'list'], hostDir);
    expect(viaPnpm.stderr).toContain(NOT_BUILT_UNDER_PNPM);
    expect(viaPnpm.code).toBe(1);
    const viaNpx = await run('npx', ['--no', 'oauth-admin', 'clients', 'list'], hostDir);
    expect(viaNpx.stderr).toContain(NOT_BUILT_UNDER_PNPM);
    expect(viaNpx.code).toBe(1);
  });

  it('strict TypeScript (nodenext, skipLibCheck off) type-checks in pnpm\'s layout: req.auth is typed there', async () => {
    const result = await typeCheck(hostDir);
    expect(result.stdout + result.stderr).toBe('');
    expect(result.code).toBe(0);
  }, 60_000);
});
