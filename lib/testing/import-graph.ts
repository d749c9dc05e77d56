import { existsSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import ts from "typescript";
import { PROJECT_ROOT } from "../dev/embedded-default";

/** A project file an import names (`@/x` or a relative path), relative to the root; null for a package. */
export function resolveImport(from: string, specifier: string): string | null {
  let base: string;
  if (specifier.startsWith("@/")) base = specifier.slice(2);
  else if (specifier.startsWith(".")) base = path.posix.normalize(path.posix.join(path.posix.dirname(from), specifier));
  else return null;
  for (const candidate of [base, `${base}.ts`, `${base}.tsx`, `${base}.d.ts`, `${base}/index.ts`]) {
    if (existsSync(path.join(PROJECT_ROOT, candidate)) && statSync(path.join(PROJECT_ROOT, candidate)).isFile())
      return candidate;
  }
  throw new Error(`${from}: cannot resolve "${specifier}"`);
}

/** What a file imports at run time: its static imports and re-exports, less those of types only. */
export function runtimeImports(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(path.join(PROJECT_ROOT, file), "utf8"), ts.ScriptTarget.Latest);
  const specifiers: string[] = [];
  for (const statement of source.statements) {
    if (ts.isImportDeclaration(statement)) {
      const clause = statement.importClause;
      const bindings = clause?.namedBindings;
      const typesOnly =
        clause?.isTypeOnly ||
        (clause &&
          !clause.name &&
          bindings &&
          ts.isNamedImports(bindings) &&
          bindings.elements.length > 0 &&
          bindings.elements.every((element) => element.isTypeOnly));
      if (!typesOnly) specifiers.push((statement.moduleSpecifier as ts.StringLiteral).text);
    } else if (ts.isExportDeclaration(statement) && statement.moduleSpecifier && !statement.isTypeOnly) {
      specifiers.push((statement.moduleSpecifier as ts.StringLiteral).text);
    }
  }
  return specifiers;
}

/** What a file loads with `import("...")` of a literal when it runs a path that needs it. */
export function dynamicImports(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(path.join(PROJECT_ROOT, file), "utf8"), ts.ScriptTarget.Latest);
  const specifiers: string[] = [];
  const visit = (node: ts.Node) => {
    if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] &&
      ts.isStringLiteralLike(node.arguments[0])
    )
      specifiers.push(node.arguments[0].text);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return specifiers;
}

/**
 * Every project file and package `entry` reaches through static imports (a dynamic import() loads
 * only when run), or with `dynamic` through those too: everything it may ever load.
 */
export function reachable(
  entry: string,
  options: { dynamic?: boolean } = {},
): { files: Set<string>; packages: Set<string> } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const queue = [entry];
  while (queue.length) {
    const file = queue.pop()!;
    if (files.has(file)) continue;
    files.add(file);
    for (const specifier of [...runtimeImports(file), ...(options.dynamic ? dynamicImports(file) : [])]) {
      const target = resolveImport(file, specifier);
      if (target) queue.push(target);
      else packages.add(specifier);
    }
  }
  return { files, packages };
}
