import { execFile, execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

/**
 * A Python interpreter with pyarrow and pandas, for tests that need what people really use on a
 * leaked file (a pandas re-save, a pyarrow cast, `to_csv`): DAS_TEST_PYTHON when it names one,
 * else `.venv-test` in the checkout, made on first use from PyPI (about a minute) and kept.
 */
export function pythonWithPyarrow(): string {
  const named = process.env.DAS_TEST_PYTHON;
  if (named) return named;
  const venv = path.join(ROOT, ".venv-test");
  const python = path.join(venv, "bin", "python");
  const ready = () => {
    try {
      execFileSync(python, ["-c", "import pyarrow, pandas"], { stdio: "ignore" });
      return true;
    } catch {
      return false;
    }
  };
  if (existsSync(python) && ready()) return python;
  execFileSync("python3", ["-m", "venv", venv], { stdio: "ignore" });
  execFileSync(python, ["-m", "pip", "install", "--quiet", "--disable-pip-version-check", "pyarrow", "pandas"], {
    stdio: ["ignore", "ignore", "inherit"],
    timeout: 600_000,
  });
  if (!ready()) throw new Error(`${venv}: pyarrow and pandas could not be installed`);
  return python;
}

/** Runs a Python script with arguments; its stdout. */
export async function runPython(script: string, args: string[] = []): Promise<string> {
  const { stdout } = await promisify(execFile)(pythonWithPyarrow(), ["-c", script, ...args], {
    maxBuffer: 64 * 1024 * 1024,
    timeout: 120_000,
  });
  return stdout;
}
