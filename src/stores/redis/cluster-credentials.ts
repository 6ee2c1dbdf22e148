// The user and password a Redis Cluster's root-node URLs carry, for every node the client discovers.

/** What node-redis's cluster `defaults` takes to authenticate each node connection. */
export interface ClusterCredentials {
  readonly username?: string;
  readonly password?: string;
}

/** Percent-decoded as node-redis decodes a URL's credentials; text that is not valid percent-encoding stays as it is. */
function decoded(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}

/**
 * The credentials of the first root-node URL that has any (`redis://user:pass@host:port`), percent-decoded.
 * node-redis uses a root node's URL only to read the slot map: every node connection, those to the root nodes
 * included, is made from the announced host and port plus the cluster's `defaults`, so credentials left in the URLs never reach the nodes that serve commands. This is what keeps
 * the README's promise that `user:password@` before the first node of a `redis+cluster://` URL applies to all.
 * A URL that does not parse carries none: node-redis refuses it itself, with its own error.
 */
export function clusterCredentials(rootNodes: readonly string[]): ClusterCredentials {
  for (const node of rootNodes) {
    let url: URL;
    try {
      url = new URL(node);
    } catch {
      continue;
    }
    if (!url.username && !url.password) continue;
    return {
      ...(url.username ? { username: decoded(url.username) } : {}),
      ...(url.password ? { password: decoded(url.password) } : {}),
    };
  }
  return {};
}
