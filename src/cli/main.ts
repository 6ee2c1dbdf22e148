#!/usr/bin/env node
// Entry point of the oauth-admin command (package.json "bin").
import { runCli, wantsJson } from './run-cli.js';
import { printWarningsAsJson } from './json-warnings.js';

const argv = process.argv.slice(2);
if (wantsJson(argv)) printWarningsAsJson();

// exitCode rather than process.exit(): pending stdout writes are flushed before the process ends.
process.exitCode = await runCli(argv);
