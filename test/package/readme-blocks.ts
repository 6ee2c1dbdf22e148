// README.md's ```ts blocks as modules of a packed host, and tsc's complaints about them traced back to README lines.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './packed-host.js';

/**
 * Blocks that are informal listings, not TypeScript a reader could compile, keyed by their first line, each with
 * why. They are compiled commented out, with a check of each record they list (`Name { a, b: T, c? }`): its fields
 * are exactly the published type's. A key that no longer opens any block fails the suite.
 */
export const LISTINGS: Readonly<Record<string, string>> = {
  "OAuthClient       { clientId, clientSecretHash, name, flow: 'authorization_code' | 'client_credentials',":
    'the Store records and methods (arrows, prose); the methods are checked by the conformance suite',
};

/** A listing's `Name { a, b: T, c? }` records as checks: an object with one key per listed field must be `Record<keyof Name, true>`. */
export function listedRecordChecks(code: readonly string[]): string[] {
  return [...code.join('\n').matchAll(/^(\w+)\s+\{([^}]*)\}/gm)].map(([, name, body]) => {
    const fields = body!.split(',').map((field) => /^\s*(\w+)/.exec(field)?.[1]).filter((field) => field !== undefined);
    return `export const listed${name}: Record<keyof import('express-oauth-router').${name}, true> = { ${fields.map((field) => `${field}: true`).join(', ')} };`;
  });
}

/**
 * Code appended to a block that restates a published type, keyed by the block's first line: compiled alone, the
 * restatement would check nothing, so it is compared member by member with the type it restates.
 */
export const CHECKED_AGAINST_THE_PACKAGE: Readonly<Record<string, string>> = {
  'interface UserAuth {': `
// Appended by the test: README's listing has the published UserAuth's members, each as optional and as typed there.
import type { Request } from 'express';
import type { UserAuth as PublishedUserAuth } from 'express-oauth-router';
type None<T extends never> = T;
export type OnlyInTheReadme = None<Exclude<keyof UserAuth, keyof PublishedUserAuth>>;
export type OnlyPublished = None<Exclude<keyof PublishedUserAuth, keyof UserAuth>>;
export const asPublished: PublishedUserAuth = {} as UserAuth;
export const asListed: UserAuth = {} as PublishedUserAuth;`,
};

/** The reader's glue: ambient declarations of what the blocks leave to the reader's app. */
export const README_GLUE = {
  file: 'readme-glue.d.ts',
  text: readFileSync(join(ROOT, 'test', 'package', 'readme-glue.d.ts'), 'utf8'),
};

/** One ```ts block of README.md. */
export interface ReadmeBlock {
  /** README.md's line of the block's first code line. */
  readonly line: number;
  /** How many lines the block has in README.md. */
  readonly rows: number;
  readonly firstLine: string;
  /** Why it is a listing, compiled as its records' checks, if it is in LISTINGS. */
  readonly listing: string | undefined;
  /** Its module in the host: the block's lines from the file's first line on, so rows map to README lines. */
  readonly file: string;
  readonly module: string;
}

/** Every ```ts (or ```typescript) block of README.md, in order; other fenced blocks are passed over whole. */
export function readmeBlocks(): ReadmeBlock[] {
  const lines = readFileSync(join(ROOT, 'README.md'), 'utf8').split('\n');
  const blocks: ReadmeBlock[] = [];
  for (let open = 0; open < lines.length; open++) {
    // CommonMark lets a fence be indented up to three spaces (as in a list item).
    const fence = /^ {0,3}(```+)\s*(\S*)/.exec(lines[open]!);
    if (!fence) continue;
    let close = open + 1;
    while (close < lines.length && !lines[close]!.trimStart().startsWith(fence[1]!)) close++;
    if (fence[2] === 'ts' || fence[2] === 'typescript') {
      const code = lines.slice(open + 1, close);
      const firstLine = code[0] ?? '';
      const line = open + 2;
      const listing = LISTINGS[firstLine];
      // A listing keeps its rows (commented out), so a diagnostic of its checks is told as "the check appended".
      const body = listing === undefined ? code : [...code.map((row) => `// ${row}`), ...listedRecordChecks(code)];
      // `export {}` makes even a fragment without imports a module: its names stay its own, and shadow the glue's.
      const module = `${body.join('\n')}\n${CHECKED_AGAINST_THE_PACKAGE[firstLine] ?? ''}\nexport {};\n`;
      blocks.push({
        line, rows: code.length, firstLine, listing, module,
        file: `readme-line-${String(line).padStart(4, '0')}.ts`,
      });
    }
    open = close;
  }
  return blocks;
}

/**
 * A host's tsc output split into what it says about each README block (as README.md:line:column) or the glue
 * (keyed by their host file), and the rest.
 */
export interface SplitDiagnostics {
  readonly byFile: ReadonlyMap<string, readonly string[]>;
  readonly other: string;
}

/** Where a diagnostic of a block's or the glue's host file is, in the repository. */
function whereInTheRepository(block: ReadmeBlock | undefined, row: number, column: string): string {
  if (block === undefined) return `test/package/readme-glue.d.ts:${row}:${column}`;
  if (row <= block.rows) return `README.md:${block.line + row - 1}:${column}`;
  return `README.md's block at line ${block.line}, the check appended to it (${block.module.split('\n')[row - 1]!.trim()}):`;
}

/** Splits tsc's output (one `file(row,col): error ...` line per diagnostic, indented continuations) by file. */
export function splitDiagnostics(output: string, blocks: readonly ReadmeBlock[]): SplitDiagnostics {
  const blockOf = new Map(blocks.map((block) => [block.file, block]));
  const byFile = new Map<string, string[]>();
  const other: string[] = [];
  let current: string[] = other;
  for (const text of output.split('\n')) {
    const located = /^(\S.*?)\((\d+),(\d+)\): (.*)$/.exec(text);
    const file = located?.[1];
    if (located && file !== undefined && (blockOf.has(file) || file === README_GLUE.file)) {
      current = byFile.get(file) ?? [];
      byFile.set(file, current);
      current.push(`${whereInTheRepository(blockOf.get(file), Number(located[2]), located[3]!)} ${located[4]}`);
    } else if (located || !/^\s/.test(text)) {
      current = other;
      if (text !== '') other.push(text);
    } else {
      current.push(text);
    }
  }
  return { byFile, other: other.join('\n') };
}
