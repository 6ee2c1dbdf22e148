// Concurrent client_credentials token requests against running servers, around an admin action, and the
// check of every token they obtained against the protected API.

/** When a request was sent, relative to the action: before it started, while it ran, after it ended. */
export type Phase = 'before' | 'during' | 'after';

/** One token endpoint answer. */
export interface TokenAnswer {
  readonly phase: Phase;
  readonly base: string;
  /** 0 when no HTTP answer came (connection refused or reset). */
  readonly status: number;
  readonly error: string | null;
  readonly accessToken: string | null;
}

/** What to run. Loops stop by counting rounds, never on a clock. */
export interface BurstOptions<T> {
  /** Loop i sends to bases[i % bases.length]. */
  readonly bases: readonly string[];
  readonly clientId: string;
  readonly clientSecret: string;
  readonly loops: number;
  /** The action starts once this many 200s have come back. */
  readonly startAfterTokens: number;
  /** Each loop stops after sending this many requests after the action ended. */
  readonly roundsAfter: number;
  /** Bound on each loop's requests, so nothing runs on if the action never ends. */
  readonly maxRounds: number;
  readonly action: () => Promise<T>;
  /** Added to every request, e.g. the X-Forwarded-For of the client host the burst stands for. */
  readonly headers?: Readonly<Record<string, string>>;
}

/** HTTP Basic credentials (RFC 6749 §2.3.1: form-urlencoded id and secret). */
export function basicAuth(clientId: string, clientSecret: string): string {
  return `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`).toString('base64')}`;
}

/** POST {base}/oauth2/token grant_type=client_credentials; `headers` adds e.g. X-Forwarded-For. */
export async function requestToken(
  base: string, authorization: string, headers: Readonly<Record<string, string>> = {},
): Promise<Omit<TokenAnswer, 'phase' | 'base'>> {
  try {
    const res = await fetch(`${base}/oauth2/token`, {
      method: 'POST',
      headers: { ...headers, Authorization: authorization, 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=client_credentials',
    });
    const body = (await res.json().catch(() => ({}))) as Record<string, unknown>;
    const token = typeof body['access_token'] === 'string' ? body['access_token'] : null;
    const error = typeof body['error'] === 'string' ? body['error'] : null;
    return { status: res.status, error, accessToken: res.status === 200 ? token : null };
  } catch (err) {
    return { status: 0, error: err instanceof Error ? err.message : String(err), accessToken: null };
  }
}

/**
 * Runs `loops` request loops spread over `bases`; once `startAfterTokens` tokens were issued, runs `action`
 * while they go on; after it ends, each loop sends `roundsAfter` more requests and stops. Resolves when every
 * request has been answered, each labelled by the phase it was sent in, except that one sent before the action
 * but answered after it started counts as 'during' (its tokens may be saved after the revocation).
 */
export async function burstAround<T>(options: BurstOptions<T>): Promise<{ answers: TokenAnswer[]; result: T }> {
  const authorization = basicAuth(options.clientId, options.clientSecret);
  const answers: TokenAnswer[] = [];
  let phase: Phase = 'before';
  let issued = 0;
  let enoughIssued!: () => void;
  const enough = new Promise<void>((done) => {
    enoughIssued = done;
  });
  const loops = Promise.all(Array.from({ length: options.loops }, async (_, i) => {
    const base = options.bases[i % options.bases.length]!;
    let sentAfter = 0;
    for (let round = 0; round < options.maxRounds && sentAfter < options.roundsAfter; round++) {
      const sentIn = phase;
      if (sentIn === 'after') sentAfter++;
      const answer = await requestToken(base, authorization, options.headers);
      // A request still in flight when the action started may meet the revocation: it belongs to 'during'.
      answers.push({ phase: sentIn === 'before' && phase !== 'before' ? 'during' : sentIn, base, ...answer });
      if (answer.status === 200 && ++issued >= options.startAfterTokens) enoughIssued();
    }
  }));
  // Loops that all end early (every request failing) still let the action run: the assertions say why.
  await Promise.race([enough, loops]);
  phase = 'during';
  const result = await options.action();
  phase = 'after';
  await loops;
  return { answers, result };
}

/** One token tried at one server's protected route. */
export interface BearerAnswer {
  readonly token: string;
  readonly base: string;
  readonly status: number;
  readonly error: string | null;
}

/**
 * GET {base}{path} with every token at every base, `concurrency` requests at a time (all of them after the
 * burst, but without opening thousands of sockets at once).
 */
export async function tryTokens(bases: readonly string[], path: string, tokens: readonly string[], concurrency = 32): Promise<BearerAnswer[]> {
  const jobs = tokens.flatMap((token) => bases.map((base) => ({ token, base })));
  const results: BearerAnswer[] = [];
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(concurrency, jobs.length) }, async () => {
    while (next < jobs.length) {
      const { token, base } = jobs[next++]!;
      try {
        const res = await fetch(`${base}${path}`, { headers: { Authorization: `Bearer ${token}` } });
        const body = (await res.json().catch(() => ({}))) as Record<string, unknown>;
        results.push({ token, base, status: res.status, error: typeof body['error'] === 'string' ? body['error'] : null });
      } catch (err) {
        results.push({ token, base, status: 0, error: err instanceof Error ? err.message : String(err) });
      }
    }
  }));
  return results;
}

/** Requests sent and tokens issued per phase, for the log and the assertions. */
export function countByPhase(answers: readonly TokenAnswer[]): Record<Phase, { sent: number; issued: number }> {
  const counts = { before: { sent: 0, issued: 0 }, during: { sent: 0, issued: 0 }, after: { sent: 0, issued: 0 } };
  for (const answer of answers) {
    counts[answer.phase].sent++;
    if (answer.accessToken) counts[answer.phase].issued++;
  }
  return counts;
}
