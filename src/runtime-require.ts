// A require() for the packages loaded at run time (store drivers, prom-client, bcryptjs), in a host's bundle too.
import { Module } from 'node:module';
import { isAbsolute } from 'node:path';

/**
 * A `require` that resolves from the running file: this package's own module when it runs from
 * `node_modules`, the host's bundle when a bundler copied it in. A bundle in CommonJS (esbuild or tsup with
 * `--format=cjs`, rollup's `cjs`, webpack) has no `import.meta` (esbuild leaves it empty, so
 * `createRequire(import.meta.url)` threw `ERR_INVALID_ARG_VALUE` there; webpack puts in the path the build
 * ran at), but has `__filename`, which an ES module has not: so the CommonJS name is tried first and the ES
 * module one otherwise. Only an absolute path counts: `node -e` sets a global `__filename` of `[eval]`.
 * `Module.createRequire`, not the named import: webpack rewrites a call of an imported `createRequire`, into an
 * empty module context ("Cannot find module") or, for anything but `import.meta.url`, into `undefined`.
 * @see DESIGN §2 (optional peer dependencies: drivers, prom-client).
 */
export function runtimeRequire(): NodeJS.Require {
  const bundleFile = typeof __filename === 'string' && isAbsolute(__filename) ? __filename : null;
  return Module.createRequire(bundleFile ?? import.meta.url);
}
