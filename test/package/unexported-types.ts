// Finds the named types the built declarations hand a host that none of the package's entry points exports.
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

/** A type the public declarations reference but no entry point exports, and where it is referenced. */
export interface UnexportedType {
  /** `Name (dist/file.d.ts)`. */
  readonly type: string;
  /** The exported (or reached) declarations that name it. */
  readonly from: readonly string[];
}

/** The `.d.ts` of every entry point of the package's `exports` map (`./package.json` has none). */
export function entryDeclarations(root: string): string[] {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { exports: Record<string, string | { types?: string }> };
  return Object.values(pkg.exports)
    .flatMap((target) => (typeof target === 'object' && target.types !== undefined ? [join(root, target.types)] : []));
}

/**
 * Walks every declaration the entry points export, and every declaration of `dist` those reach, for references to
 * named types (and `typeof` values) declared in `dist`: each one no entry point exports is one a host cannot name, so
 * a host library whose inferred types reach it fails its declaration emit (TS2742, TS4023, TS4058) and a host cannot
 * annotate with it. Not counted: the value a class of the package extends (`declare const StoreBase: abstract new () =>
 * …`), which tsc emits because an `extends` clause needs a value; a host's declarations name the class, never its base,
 * and the base's own type is walked like any other.
 */
export function unexportedTypes(root: string): UnexportedType[] {
  const dist = join(root, 'dist');
  const entries = entryDeclarations(root);
  const program = ts.createProgram(entries, {
    module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, target: ts.ScriptTarget.ES2022,
    strict: true, skipLibCheck: true, noEmit: true,
  });
  const checker = program.getTypeChecker();
  const resolveAlias = (sym: ts.Symbol): ts.Symbol => (sym.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(sym) : sym);
  const exported = new Set<ts.Symbol>();
  for (const entry of entries) {
    const file = program.getSourceFile(entry);
    if (!file) throw new Error(`no declarations at ${relative(root, entry)}: run npm run build`);
    const module = checker.getSymbolAtLocation(file);
    for (const sym of module ? checker.getExportsOfModule(module) : []) exported.add(resolveAlias(sym));
  }
  const inDist = (d: ts.Declaration): boolean => d.getSourceFile().fileName.startsWith(dist);
  const queue = [...exported];
  const queued = new Set(queue);
  const missing = new Map<ts.Symbol, Set<string>>();
  const isClassBase = (node: ts.Node, sym: ts.Symbol): boolean => ts.isExpressionWithTypeArguments(node)
    && ts.isHeritageClause(node.parent) && node.parent.token === ts.SyntaxKind.ExtendsKeyword
    && ts.isClassDeclaration(node.parent.parent) && (sym.flags & ts.SymbolFlags.Variable) !== 0 && (sym.flags & ts.SymbolFlags.Type) === 0;
  const visit = (node: ts.Node, from: string): void => {
    const name = ts.isTypeReferenceNode(node) ? node.typeName
      : ts.isTypeQueryNode(node) ? node.exprName
        : ts.isExpressionWithTypeArguments(node) ? node.expression : undefined;
    const found = name && checker.getSymbolAtLocation(name);
    const sym = found && resolveAlias(found);
    if (sym && !(sym.flags & ts.SymbolFlags.TypeParameter) && sym.declarations?.some(inDist)) {
      if (!exported.has(sym) && !isClassBase(node, sym)) missing.set(sym, (missing.get(sym) ?? new Set()).add(from));
      if (!queued.has(sym)) { queued.add(sym); queue.push(sym); }
    }
    ts.forEachChild(node, (child) => visit(child, from));
  };
  for (let sym = queue.shift(); sym; sym = queue.shift()) {
    for (const declaration of sym.declarations ?? []) if (inDist(declaration)) visit(declaration, sym.name);
  }
  return [...missing].map(([sym, from]) => ({
    type: `${sym.name} (${relative(root, sym.declarations![0]!.getSourceFile().fileName)})`,
    from: [...from].sort(),
  })).sort((a, b) => a.type.localeCompare(b.type));
}
