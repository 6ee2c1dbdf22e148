// Counts the store calls of one request kind against a server started with --count (not timed).

/**
 * Sends `count` sequential requests, then reads the server's store-call counters. `init` may be a function of the
 * request's index, for requests that must differ (a fresh authorization code each).
 * @returns {Promise<Record<string, number>>} store calls per request, keyed `part.method`
 */
export async function countRoundTrips(server, path, init, count = 50) {
  await fetch(`${server.url}/__bench/store-calls`); // reset
  for (let i = 0; i < count; i += 1) {
    const response = await fetch(`${server.url}${path}`, typeof init === 'function' ? init(i) : init);
    await response.arrayBuffer();
    if (!response.ok) throw new Error(`${path} answered ${response.status} while counting store calls`);
  }
  const totals = await (await fetch(`${server.url}/__bench/store-calls`)).json();
  return Object.fromEntries(Object.entries(totals).map(([key, total]) => [key, total / count]));
}
