import type { Problem } from "../../json-document";

export type { Problem };

/** Problems found in an import, in file and line order, keeping the first few hundred in full. */
export class ProblemList {
  private readonly kept: Problem[] = [];
  count = 0;

  constructor(private readonly keep = 200) {}

  add(...problems: Problem[]): void {
    for (const problem of problems) {
      this.count++;
      if (this.kept.length < this.keep) this.kept.push(problem);
    }
  }

  /** Counts problems that a query found but returned only the first of. */
  addCounted(problems: Problem[], total: number): void {
    this.add(...problems);
    this.count += Math.max(0, total - problems.length);
  }

  list(): Problem[] {
    return [...this.kept].sort((a, b) => (a.file === b.file ? a.line - b.line : a.file < b.file ? -1 : 1));
  }
}

export class ImportError extends Error {
  constructor(
    readonly problems: Problem[],
    readonly total: number,
  ) {
    const shown = problems.map((p) => `${p.file}:${p.line}: ${p.message}`);
    if (total > problems.length) shown.push(`... and ${total - problems.length} more problems`);
    super(`Import refused, nothing was written:\n${shown.join("\n")}`);
    this.name = "ImportError";
  }
}
