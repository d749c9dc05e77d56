import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "@/lib/dev/embedded-default";
import { runCli, type CliRun } from "@/lib/testing/cli";

// The help, the version and the usage errors of both command lines, run as a user runs them. None
// of it needs the service or a database: das has no API to talk to here, and das-admin's data
// directory must stay empty (a usage error or a help starts no PostgreSQL).

const scratch = mkdtempSync(path.join(tmpdir(), "das-cli-help-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const env: NodeJS.ProcessEnv = { ...process.env, DAS_API_URL: "", DAS_API_KEY: "", DAS_DATA_DIR: scratch };
delete env.DATABASE_URL;

type Cli = "das" | "das-admin";
const run = (cli: Cli, args: string[]) => runCli(cli, args, { env });

/** Each run starts node and tsx (about a second of CPU): a few at a time. */
async function runAll(cli: Cli, argvs: string[][]): Promise<CliRun[]> {
  const runs: CliRun[] = [];
  for (let i = 0; i < argvs.length; i += 4)
    runs.push(...(await Promise.all(argvs.slice(i, i + 4).map((args) => run(cli, args)))));
  return runs;
}

const COMMANDS: Record<Cli, string[]> = {
  das: ["datasets", "licences", "versions", "manifest", "episodes", "annotations", "pull", "help"],
  "das-admin": [
    "migrate",
    "import",
    "org create",
    "licence grant",
    "licence revoke",
    "licence end",
    "terms add",
    "terms show",
    "key create",
    "key revoke",
    "user create",
    "seed",
    "disclosures verify",
    "disclosures export",
    "disclosures digest",
    "store check",
    "help",
    "key",
  ],
};

describe("--help", () => {
  it("the program's help lists every command, on stdout, exit 0", async () => {
    const [das, admin, dasShort, adminHelp] = await Promise.all([
      run("das", ["--help"]),
      run("das-admin", ["--help"]),
      run("das", ["-h"]),
      run("das-admin", ["help"]),
    ]);
    for (const r of [das, admin, dasShort, adminHelp]) expect(r).toMatchObject({ code: 0, stderr: "" });
    expect(das.stdout.startsWith("Usage: das <command> [options]\n")).toBe(true);
    expect(dasShort.stdout).toBe(das.stdout);
    for (const line of [
      "datasets [options]",
      "versions [options] <dataset>",
      "episodes [options] <dataset@version>",
      "pull [options] <dataset@version>",
      "Exit codes: 0 done, 1 failed, 2 wrong usage, 130 interrupted.",
    ]) {
      expect(das.stdout).toContain(line);
    }
    expect(admin.stdout.startsWith("Usage: das-admin <command>\n")).toBe(true);
    expect(adminHelp.stdout).toBe(admin.stdout);
    // Every command by its full words, not only the groups.
    for (const line of [
      "import [options] <dir>",
      "store check [options] <dataset@version>",
      "org create [options] <slug>",
      "licence grant [options] <org> <dataset> <version>",
      "licence end [options] <org> <dataset> <version>",
      "terms add [options]",
      "terms show [options] <sha256>",
      "dataset listing <dataset> <listing>",
      "key create [options] <org>",
      "key revoke <key>",
      "disclosures export [options]",
      "help [command...]",
    ]) {
      expect(admin.stdout).toContain(`\n  ${line}`);
    }
  });

  it("a command's --help and `help <command>` print that command's usage, options and examples, and no other's", async () => {
    const [pull, helpPull, keyCreate, helpKeyCreate, exportHelp, keyGroup] = await Promise.all([
      run("das", ["pull", "--help"]),
      run("das", ["help", "pull"]),
      run("das-admin", ["key", "create", "--help"]),
      run("das-admin", ["help", "key", "create"]),
      run("das-admin", ["disclosures", "export", "-h"]),
      run("das-admin", ["key", "--help"]),
    ]);
    for (const r of [pull, helpPull, keyCreate, helpKeyCreate, exportHelp, keyGroup])
      expect(r).toMatchObject({ code: 0, stderr: "" });

    expect(pull.stdout.startsWith("Usage: das pull [options] <dataset@version>\n")).toBe(true);
    expect(helpPull.stdout).toBe(pull.stdout);
    for (const text of [
      "--dir <dir>",
      "where the files go (required)",
      "--concurrency <n>",
      "(default: 4)",
      "--limit-rate <rate>",
      "--streams <streams>",
      "--task <task>",
      "--contributor <contributor>",
      "--has-recovery <true|false>",
      "--min-duration-s <seconds>",
      "--max-duration-s <seconds>",
      "--url <url>",
      "--key <key>",
      "Examples:\n  $ das pull kitchen-pick-place@1.1.0 --dir ./kpp\n",
    ]) {
      expect(pull.stdout).toContain(text);
    }
    expect(pull.stdout).not.toContain("--format");
    expect(pull.stdout).not.toContain("datasets");

    expect(keyCreate.stdout.startsWith("Usage: das-admin key create [options] <org>\n")).toBe(true);
    expect(helpKeyCreate.stdout).toBe(keyCreate.stdout);
    for (const text of [
      "--name <name>",
      '(default: "cli")',
      "--expires-in <duration>",
      "--scope <dataset@version>",
      "alone on stdout",
      "$ das-admin key create acme",
    ]) {
      expect(keyCreate.stdout).toContain(text);
    }
    expect(keyCreate.stdout).not.toContain("--role");
    expect(keyCreate.stdout).not.toContain("revoke");

    expect(exportHelp.stdout.startsWith("Usage: das-admin disclosures export [options]\n")).toBe(true);
    expect(exportHelp.stdout).toMatch(/--format <format> +CSV or JSON Lines \(required\) \(choices: "csv", "jsonl"\)/);
    for (const text of ["--from <time>", "--to <time>", "--org <slug>", "--dataset <id>"])
      expect(exportHelp.stdout).toContain(text);

    expect(keyGroup.stdout.startsWith("Usage: das-admin key <command>\n")).toBe(true);
    expect(keyGroup.stdout).toMatch(/\n {2}create \[options\] <org> +issue an API key/);
    expect(keyGroup.stdout).toMatch(/\n {2}revoke <key> +revoke an API key/);
  });

  it("every command answers --help with its own usage and exits 0", { timeout: 300_000 }, async () => {
    for (const cli of ["das", "das-admin"] as const) {
      const runs = await runAll(
        cli,
        COMMANDS[cli].map((command) => [...command.split(" "), "--help"]),
      );
      for (const [i, r] of runs.entries()) {
        const command = COMMANDS[cli][i]!;
        expect(r.code, `${cli} ${command} --help: ${r.stderr}`).toBe(0);
        expect(r.stderr).toBe("");
        expect(r.stdout.startsWith(`Usage: ${cli} ${command} `), `${cli} ${command}: ${r.stdout}`).toBe(true);
      }
    }
  });

  it("the program without a command prints its usage on stdout and exits 2", async () => {
    const [das, admin] = await Promise.all([run("das", []), run("das-admin", [])]);
    expect(das).toMatchObject({ code: 2, stderr: "" });
    expect(das.stdout.startsWith("Usage: das <command> [options]\n")).toBe(true);
    expect(admin).toMatchObject({ code: 2, stderr: "" });
    expect(admin.stdout.startsWith("Usage: das-admin <command>\n")).toBe(true);
  });
});

describe("--version", () => {
  it("prints the package's version and exits 0", async () => {
    const { version } = JSON.parse(readFileSync(path.join(PROJECT_ROOT, "package.json"), "utf8")) as {
      version: string;
    };
    const runs = await Promise.all([run("das", ["--version"]), run("das-admin", ["--version"]), run("das", ["-V"])]);
    for (const r of runs) expect(r).toEqual({ code: 0, signal: null, stdout: `${version}\n`, stderr: "" });
  });

  it("after a command, --version is the command's own option", async () => {
    // `das annotations <episode> --version 1.1.0` names a dataset version: it must not print the program's.
    const r = await run("das", ["annotations", "ep-1", "--version", "1.1.0"]);
    expect(r.code).toBe(2);
    expect(r.stderr.startsWith("Set DAS_API_URL")).toBe(true);
  });
});

describe("usage errors", () => {
  it("an unknown option names the closest valid one and exits 2, with the command's usage", async () => {
    const [pull, pullAlone, key, nothingClose] = await Promise.all([
      run("das", ["pull", "kpp@1.0.0", "--dir", "x", "--concurency", "4"]),
      run("das", ["pull", "--concurency", "4"]),
      run("das-admin", ["key", "create", "acme", "--expires", "30d"]),
      run("das-admin", ["org", "create", "acme", "--colour", "red"]),
    ]);
    for (const r of [pull, pullAlone]) {
      expect(r.code, r.stderr).toBe(2);
      expect(r.stdout).toBe("");
      expect(
        r.stderr.startsWith(
          "Unknown option '--concurency'.\n(Did you mean --concurrency?)\n\nUsage: das pull [options] <dataset@version>\n",
        ),
        r.stderr,
      ).toBe(true);
    }
    expect(key.code).toBe(2);
    expect(
      key.stderr.startsWith(
        "das-admin: Unknown option '--expires'.\n(Did you mean --expires-in?)\n\nUsage: das-admin key create [options] <org>\n",
      ),
      key.stderr,
    ).toBe(true);
    expect(nothingClose.code).toBe(2);
    expect(
      nothingClose.stderr.startsWith(
        "das-admin: Unknown option '--colour'.\n\nUsage: das-admin org create [options] <slug>\n",
      ),
      nothingClose.stderr,
    ).toBe(true);
  });

  it("a flag cut short names the options it begins, however many letters are missing", async () => {
    const [expire, conc] = await Promise.all([
      run("das-admin", ["key", "create", "acme", "--expire", "30d"]),
      run("das", ["pull", "kpp@1.0.0", "--dir", "x", "--conc", "4"]),
    ]);
    expect(expire.code).toBe(2);
    expect(
      expire.stderr.startsWith(
        "das-admin: Unknown option '--expire'.\n(Did you mean --expires-in?)\n\nUsage: das-admin key create [options] <org>\n",
      ),
      expire.stderr,
    ).toBe(true);
    expect(conc.code).toBe(2);
    expect(
      conc.stderr.startsWith(
        "Unknown option '--conc'.\n(Did you mean --concurrency?)\n\nUsage: das pull [options] <dataset@version>\n",
      ),
      conc.stderr,
    ).toBe(true);
  });

  it("an unknown command names the closest valid one and exits 2, with the usage of the level it was wrong at", async () => {
    const [pul, helpPul, licnce, crate, group] = await Promise.all([
      run("das", ["pul", "kpp@1.0.0"]),
      run("das", ["help", "pul"]),
      run("das-admin", ["licnce", "grant", "acme", "kpp", "1.0.0"]),
      run("das-admin", ["key", "crate", "acme"]),
      run("das-admin", ["licence"]),
    ]);
    for (const r of [pul, helpPul, licnce, crate, group]) {
      expect(r.code, r.stderr).toBe(2);
      expect(r.stdout).toBe("");
    }
    expect(
      pul.stderr.startsWith("unknown command 'pul'.\n(Did you mean pull?)\n\nUsage: das <command> [options]\n"),
      pul.stderr,
    ).toBe(true);
    expect(helpPul.stderr).toBe(pul.stderr);
    expect(
      licnce.stderr.startsWith(
        "das-admin: unknown command 'licnce'.\n(Did you mean licence?)\n\nUsage: das-admin <command>\n",
      ),
      licnce.stderr,
    ).toBe(true);
    expect(
      crate.stderr.startsWith(
        "das-admin: unknown command 'key crate'.\n(Did you mean create?)\n\nUsage: das-admin key <command>\n",
      ),
      crate.stderr,
    ).toBe(true);
    expect(
      group.stderr.startsWith(
        "das-admin: unknown command 'licence'.\n(Did you mean one of licence grant, licence end, licence revoke, licence list?)\n\nUsage: das-admin licence <command>\n",
      ),
      group.stderr,
    ).toBe(true);
  });

  it("asked for the help of a command that does not exist, says so as running it would (exit 2), not with the program's help", async () => {
    const [pul, crate, known] = await Promise.all([
      run("das", ["pul", "--help"]),
      run("das-admin", ["key", "crate", "-h"]),
      run("das-admin", ["key", "create", "--help"]),
    ]);
    for (const r of [pul, crate]) {
      expect(r.code, r.stderr).toBe(2);
      expect(r.stdout).toBe("");
    }
    expect(
      pul.stderr.startsWith("unknown command 'pul'.\n(Did you mean pull?)\n\nUsage: das <command> [options]\n"),
      pul.stderr,
    ).toBe(true);
    expect(
      crate.stderr.startsWith(
        "das-admin: unknown command 'key crate'.\n(Did you mean create?)\n\nUsage: das-admin key <command>\n",
      ),
      crate.stderr,
    ).toBe(true);
    // A command that exists still answers its help.
    expect(known.code).toBe(0);
    expect(known.stdout.startsWith("Usage: das-admin key create [options] <org>\n")).toBe(true);
  });

  it("refuses bad option values with a clear message and exit 2, before asking the API anything", async () => {
    const pull = (...args: string[]) => ["pull", "kpp@1.0.0", "--dir", "x", ...args];
    const cases: [string[], string][] = [
      [pull("--concurrency", "0"), "--concurrency takes a whole number from 1 to 64."],
      [pull("--concurrency", "65"), "--concurrency takes a whole number from 1 to 64."],
      [pull("--concurrency", "4.5"), "--concurrency takes a whole number from 1 to 64."],
      [pull("--limit-rate", "2X"), "--limit-rate takes bytes per second such as 500k or 2M, not '2X'."],
      [pull("--limit-rate", "0.5"), "--limit-rate must be at least 1 byte per second."],
      [pull("--episodes", " , "), "--episodes takes a comma-separated list."],
      [pull("--dir"), "Option '--dir <dir>' argument missing."],
      [["pull", "kpp", "--dir", "x"], "Expected <dataset>@<version> (e.g. kitchen-pick-place@1.1.0), not 'kpp'."],
      [["pull", "kpp@1.0.0"], "pull needs --dir DIR: where the files go."],
      [["pull", "--dir", "x"], "Expected 1 argument(s), got 0."],
      [["episodes", "kpp@1.0.0", "--format", "xml"], "--format must be one of table, csv, jsonl."],
      [["datasets", "extra"], "Expected 0 argument(s), got 1."],
    ];
    const runs = await runAll(
      "das",
      cases.map(([args]) => args),
    );
    for (const [i, r] of runs.entries()) {
      const [args, message] = cases[i]!;
      const command = args[0]!;
      expect(r.code, `${args.join(" ")}: ${r.stderr}`).toBe(2);
      expect(r.stdout).toBe("");
      expect(r.stderr.startsWith(`${message}\n\nUsage: das ${command} `), `${args.join(" ")}: ${r.stderr}`).toBe(true);
    }
  });

  it("das-admin started no database for any of this", () => {
    expect(readdirSync(scratch)).toEqual([]);
  });
});
