// With --json, a process warning (a driver's, say) is one JSON line on stderr like the error, not Node's free text.

/**
 * Replaces Node's printing of process warnings with one `{"warning": NAME, "message": TEXT}` line on stderr, so
 * that with `--json` every line a script reads there parses (node-postgres warns about `sslmode=require`, for one,
 * in text Node prefixes with `(node:PID)`). Warnings are not dropped: an operator still sees them.
 * @see README "oauth-admin" (`--json`: stderr holds JSON lines only).
 */
export function printWarningsAsJson(): void {
  process.removeAllListeners('warning');
  process.on('warning', (warning: Error) => {
    process.stderr.write(`${JSON.stringify({ warning: warning.name, message: warning.message })}\n`);
  });
}
