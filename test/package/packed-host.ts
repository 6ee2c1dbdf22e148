// Packs the package once and installs the tarball into fresh host folders, as a host app's developer would.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { cp, mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root (the package being packed). */
export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The repository's TypeScript compiler: hosts type-check with the version this package is built with. */
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');

/** What a finished command reports. */
export interface CommandResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs a command to its end; never rejects, so the caller's assertion shows the output. */
export function run(command: string, args: readonly string[], cwd: string): Promise<CommandResult> {
  return new Promise((resolve) => {
    execFile(command, args, {
      cwd,
      maxBuffer: 32 * 1024 * 1024,
      env: { ...process.env, npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false' },
    }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
      resolve({ code, stdout: String(stdout), stderr: String(stderr) });
    });
  });
}

/** `npm pack` of the built package (`dist` must be current: `npm test` builds first) into `into`. */
export async function packPackage(into: string): Promise<string> {
  // --ignore-scripts: prepack would rebuild dist while other test files run the built CLI from it.
  const packed = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', into], ROOT);
  if (packed.code !== 0) throw new Error(`npm pack failed:\n${packed.stderr}`);
  const [info] = JSON.parse(packed.stdout) as [{ filename: string }];
  return join(into, info.filename);
}

/** A host folder: its package.json, its source files, and what it installs besides the tarball. */
export interface HostSpec {
  readonly dir: string;
  readonly type: 'module' | 'commonjs';
  readonly files: Readonly<Record<string, string>>;
  /** Packages the host adds next to the tarball, e.g. `express@4`, `@types/express@4`. */
  readonly installs: readonly string[];
  /** Install without running any package's install script, as an npm that skips scripts missing from `allowScripts` does. */
  readonly ignoreScripts?: boolean;
}

/** Writes the host's files and installs only the tarball and what the host adds. */
export async function createHost(tarball: string, spec: HostSpec): Promise<void> {
  await mkdir(spec.dir, { recursive: true });
  const name = `host-${spec.dir.split('/').pop()}`;
  await writeFile(join(spec.dir, 'package.json'), JSON.stringify({ name, private: true, type: spec.type }, null, 2));
  for (const [file, text] of Object.entries(spec.files)) await writeFile(join(spec.dir, file), text);
  const flags = ['--no-audit', '--no-fund', '--prefer-offline', ...(spec.ignoreScripts === true ? ['--ignore-scripts'] : [])];
  const installed = await run('npm', ['install', ...flags, tarball, ...spec.installs], spec.dir);
  if (installed.code !== 0) throw new Error(`npm install in ${spec.dir} failed:\n${installed.stderr}`);
}

/**
 * A host laid out as pnpm (without hoisting) or Yarn PnP lay it out, made from an installed npm host without
 * installing anything: its own folder holds only what it depends on (`links`, linked to the npm host's copies, whose
 * own dependencies resolve there) and a copy of the package (`package.json` and `dist`), from which only those and the
 * host's own packages resolve, never a dependency of a dependency (`express-serve-static-core`, which `@types/express`
 * brings).
 */
export async function createStrictLayoutHost(
  from: string, spec: Omit<HostSpec, 'installs' | 'ignoreScripts'>, links: readonly string[],
): Promise<void> {
  const modules = join(spec.dir, 'node_modules');
  const pkg = join(modules, 'express-oauth-router');
  await mkdir(join(modules, '@types'), { recursive: true });
  await mkdir(pkg);
  const installed = join(from, 'node_modules', 'express-oauth-router');
  await cp(join(installed, 'package.json'), join(pkg, 'package.json'));
  await cp(join(installed, 'dist'), join(pkg, 'dist'), { recursive: true });
  for (const name of links) await symlink(join(from, 'node_modules', name), join(modules, name), 'dir');
  await writeFile(join(spec.dir, 'package.json'), JSON.stringify({ name: 'host-strict-layout', private: true, type: spec.type }, null, 2));
  for (const [file, text] of Object.entries(spec.files)) await writeFile(join(spec.dir, file), text);
}

/** Runs the repository's `tsc -p <tsconfig>` in a host folder. */
export function typeCheck(dir: string, tsconfig = 'tsconfig.json'): Promise<CommandResult> {
  return run(process.execPath, [TSC, '-p', tsconfig], dir);
}

/** Credentials of an integration a host registered. */
export interface HostClient {
  readonly clientId: string;
  readonly clientSecret: string;
}

/** A running host: its issuer (`http://127.0.0.1:PORT`) and its two integrations. */
export interface RunningHost {
  readonly issuer: string;
  readonly machine: HostClient;
  readonly web: HostClient;
  stop(): void;
}

/** Starts `node <entry>` in a host folder and waits for the JSON line it prints once it listens. */
export function startHost(dir: string, entry: string): Promise<RunningHost> {
  return startListening<Omit<RunningHost, 'stop'>>(dir, entry);
}

/** The same for a host whose JSON line says something else (`Ready`). */
export function startListening<Ready extends object>(dir: string, entry: string): Promise<Ready & { stop(): void }> {
  const child: ChildProcess = spawn(process.execPath, [entry], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  return new Promise((resolve, reject) => {
    child.stderr!.on('data', (chunk: Buffer) => { stderr += chunk.toString(); });
    child.stdout!.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const newline = stdout.indexOf('\n');
      if (newline < 0) return;
      const ready = JSON.parse(stdout.slice(0, newline)) as Ready;
      resolve({ ...ready, stop: () => child.kill() });
    });
    child.on('exit', (code) => reject(new Error(`${entry} in ${dir} exited (${code}) before listening:\n${stderr}`)));
  });
}
