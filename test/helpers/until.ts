// Polls a condition of a server a test started (a port listening, a replica in sync) until it holds, or fails naming it.

/**
 * Resolves once `probe` answers true, trying every `everyMs` ms up to `tries` times; a probe that throws counts as
 * false (a server still starting refuses the connection). Rejects naming `what` when the time is up.
 */
export async function until(
  what: string, probe: () => boolean | Promise<boolean>, { everyMs = 25, tries = 400 }: { everyMs?: number; tries?: number } = {},
): Promise<void> {
  for (let tried = 0; ; tried += 1) {
    if (await Promise.resolve().then(probe).catch(() => false)) return;
    if (tried >= tries) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
