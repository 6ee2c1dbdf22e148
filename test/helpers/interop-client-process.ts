// Runs one of the client programs in test/interop-clients as a child process, acting as the user's browser
// whenever it prints an authorization URL, and hands back the last JSON line it printed.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { browseAuthorization } from './fetch-browser.js';

export type Json = Record<string, unknown>;

/**
 * Runs `command args… mode` with `env` added to this process's environment. A program prints one JSON object per
 * line; for a line with `authorization_url` this "browser" signs in, allows, and writes the callback URL to its
 * stdin. Resolves with the last line; rejects with everything printed if the program exits with a failure.
 */
export async function runInteropClient(command: string, args: readonly string[], mode: string, env: Record<string, string>): Promise<Json> {
  const child = spawn(command, [...args, mode], {
    env: { ...process.env, NO_PROXY: '127.0.0.1,localhost', no_proxy: '127.0.0.1,localhost', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString(); });
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  const lines: Json[] = [];
  for await (const line of createInterface({ input: child.stdout })) {
    const message = JSON.parse(line) as Json;
    lines.push(message);
    if (typeof message.authorization_url === 'string') {
      const callback = await browseAuthorization(new URL(message.authorization_url));
      child.stdin.write(`${callback.href}\n`);
    }
  }
  const code = await exited;
  if (code !== 0) throw new Error(`${command} ${args.join(' ')} ${mode} exited with ${code}: ${JSON.stringify(lines)}\n${stderr}`);
  return lines.at(-1)!;
}
