// Lets node-redis 5's cluster client drop a node connection that is already closed without throwing.

/** A node connection of node-redis 5's cluster client, as this changes it. */
interface DestroyableLike {
  readonly isOpen: boolean;
  destroy(): void;
}

const tolerant = new WeakSet<object>();

/**
 * Makes `client.destroy()` do nothing once the connection is closed. The store's node connections stay closed when
 * lost (their reconnect strategy gives up; the reconnector makes them again), and node-redis, reading the slot map,
 * destroys the connection of every node that left it, where destroy() on a closed client throws ClientClosedError:
 * after a failover whose dead master was still closed, every re-read of the map threw there (its leftover node kept
 * in the map for ever), so each MOVED reply failed its command (a 503) instead of being followed.
 * @see https://redis.io/docs/latest/operate/oss_and_stack/reference/cluster-spec/ (MOVED redirection, failover)
 */
export function tolerateClosedDestroy(client: DestroyableLike): void {
  if (tolerant.has(client)) return;
  tolerant.add(client);
  const destroy = client.destroy.bind(client);
  client.destroy = () => {
    if (client.isOpen) destroy();
  };
}
