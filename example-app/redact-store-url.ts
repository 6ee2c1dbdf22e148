// The store URL as the banner may show it: every password in it replaced by ***.

/** Query parameters that hold a password: node-postgres reads `password` and `sslpassword` from the query. */
const PASSWORD_PARAM = /passw(or)?d|secret/i;

function decodedName(name: string): string {
  try {
    return decodeURIComponent(name.replace(/\+/g, ' '));
  } catch {
    return name;
  }
}

/** `a=1&password=x&sslPassword=y` → `a=1&password=***&sslPassword=***`; everything else stays as written. */
function redactQuery(query: string): string {
  return query
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      const name = eq === -1 ? pair : pair.slice(0, eq);
      return eq !== -1 && PASSWORD_PARAM.test(decodedName(name)) ? `${name}=***` : pair;
    })
    .join('&');
}

/**
 * OAUTH_STORE without its passwords, for every form the app accepts (src/stores/from-url.ts): the password of
 * the userinfo (`scheme://user:PASSWORD@…`, also before a `redis+cluster://` node list, which no URL parser
 * reads, and a PostgreSQL host list) and the value of every query parameter named like a password
 * (`?password=`, `?sslpassword=`, any case), which node-postgres takes as the password too. Read by hand, not
 * with `new URL`: a URL it cannot parse would otherwise be shown whole. `sqlite:` and `memory:` hold none.
 * @see example-app/README "Logs" (no line holds a password).
 */
export function redactStoreUrl(url: string): string {
  const hash = url.indexOf('#');
  const beforeHash = hash === -1 ? url : url.slice(0, hash);
  const fragment = hash === -1 ? '' : url.slice(hash);
  const question = beforeHash.indexOf('?');
  let head = question === -1 ? beforeHash : beforeHash.slice(0, question);
  const query = question === -1 ? '' : `?${redactQuery(beforeHash.slice(question + 1))}`;
  const scheme = head.indexOf('://');
  if (scheme !== -1) {
    const start = scheme + 3;
    const slash = head.indexOf('/', start);
    const authorityEnd = slash === -1 ? head.length : slash;
    const at = head.lastIndexOf('@', authorityEnd);
    const colon = head.indexOf(':', start);
    if (at >= start && colon !== -1 && colon < at) head = `${head.slice(0, colon + 1)}***${head.slice(at)}`;
  }
  return `${head}${query}${fragment}`;
}
