// Parses `redis+cluster://host:port,host:port?prefix=…` into the root-node URLs of a Redis Cluster.

/**
 * `redis+cluster://[user:pass@]host:port,host:port[?prefix=STR]` (or `rediss+cluster://` for TLS) → one
 * `redis://` URL per listed node (credentials repeated on each) and the prefix. Node-redis discovers the other
 * nodes from any of them, so listing a few is enough. Errors name the scheme only: the URL may hold a password.
 * @throws TypeError for a URL without nodes, a node without a port, or a path.
 */
export function parseRedisClusterUrl(url: string): { rootNodes: string[]; prefix: string | undefined } {
  const match = /^(rediss?)\+cluster:\/\/([^/?#]*)(\/?)(?:\?([^#]*))?$/i.exec(url.trim());
  if (!match) throw new TypeError('OAUTH_STORE: write a Redis Cluster as redis+cluster://host:port,host:port[?prefix=STR]');
  const [, base, authority = '', , query = ''] = match;
  const at = authority.lastIndexOf('@');
  const credentials = at >= 0 ? authority.slice(0, at + 1) : '';
  const hosts = (at >= 0 ? authority.slice(at + 1) : authority).split(',').filter((h) => h !== '');
  if (hosts.length === 0 || hosts.some((h) => !/^(\[[0-9a-f:.]+\]|[^:[\]]+):\d{1,5}$/i.test(h))) {
    throw new TypeError('OAUTH_STORE: a redis+cluster:// URL lists nodes as host:port, separated by commas');
  }
  const params = new URLSearchParams(query);
  const prefixes = params.getAll('prefix');
  if (prefixes.length > 1) throw new TypeError('OAUTH_STORE: give the parameter "prefix" once');
  return {
    rootNodes: hosts.map((h) => `${base!.toLowerCase()}://${credentials}${h}`),
    prefix: prefixes[0],
  };
}
