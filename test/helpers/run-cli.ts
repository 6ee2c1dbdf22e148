// Runs the built oauth-admin command as a child process against one store file, for the CLI tests.
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';

const CLI = resolve(import.meta.dirname, '../../dist/cli/main.js');

/** What a CLI run printed and how it exited. */
export interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `oauth-admin ARGS` in `cwd` with exactly `env` (no OAUTH_STORE unless given); never rejects. */
export function runCliWith(args: readonly string[], options: { readonly cwd?: string; readonly env: NodeJS.ProcessEnv }): Promise<CliResult> {
  return new Promise((done) => {
    execFile(process.execPath, [CLI, ...args], { env: options.env, ...(options.cwd ? { cwd: options.cwd } : {}) }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
      done({ code, stdout, stderr });
    });
  });
}

/** Runs `oauth-admin ARGS` with `OAUTH_STORE=sqlite:<storeFile>`; resolves (never rejects) with its result. */
export function runCli(storeFile: string, args: readonly string[]): Promise<CliResult> {
  return runCliWith(args, { env: { ...process.env, OAUTH_STORE: `sqlite:${storeFile}` } });
}
