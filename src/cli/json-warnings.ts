// With --json, a process warning (a driver's, say) is one JSON line on stderr like the error, not Node's free text.

let json = false;

/**
 * Writes one warning of oauth-admin's own on stderr, at once: `{"warning": NAME, "message": TEXT}` once
 * `printWarningsAsJson` has run (`--json`), else `oauth-admin: TEXT`. Not `process.emitWarning`, which prints on a
 * later tick that a command ending at once may not reach.
 */
export function writeWarning(name: string, text: string): void {
  process.stderr.write(json ? `${JSON.stringify({ warning: name, message: text })}\n` : `oauth-admin: ${text}\n`);
}

/**
 * Replaces Node's printing of process warnings with one `{"warning": NAME, "message": TEXT}` line on stderr, so
 * that with `--json` every line a script reads there parses (node-postgres warns about `sslmode=require`, for one,
 * in text Node prefixes with `(node:PID)`). Warnings are not dropped: an operator still sees them.
 * @see README "oauth-admin" (`--json`: stderr holds JSON lines only).
 */
export function printWarningsAsJson(): void {
  json = true;
  process.removeAllListeners('warning');
  process.on('warning', (warning: Error) => {
    process.stderr.write(`${JSON.stringify({ warning: warning.name, message: warning.message })}\n`);
  });
}
