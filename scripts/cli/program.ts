import { readFileSync } from "node:fs";
import {
  Command,
  CommanderError,
  Help,
  InvalidArgumentError,
  type Argument,
  type HelpContext,
  type Option,
} from "commander";
import { Exit, say, UsageError } from "./terminal";

// The frame both command lines share: commander parses and writes the help; this file keeps the
// conventions they had before it. Exit codes: 0 done (also --help and --version), 1 failed,
// 2 wrong usage, and whatever a command chooses with Exit (130 interrupted). Help asked for goes to
// stdout; every error goes to stderr, a usage error as one message, a blank line and the usage of
// the command that was wrong.

const VERSION = (
  JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }
).version;

/** The code of a usage error this frame reported itself. */
const USAGE = "cli.usage";

/** "csv or jsonl", "one of admin, reviewer, licensee" */
export const mustBe = (flag: string, choices: readonly string[]) =>
  `${flag} must be ${choices.length > 2 ? `one of ${choices.join(", ")}` : choices.join(" or ")}.`;

export class CliCommand extends Command {
  /** Put before every error message: "das-admin: ". */
  prefix = "";
  /** Options declared with `needs`. */
  private readonly needed: { option: Option; why: string }[] = [];

  override createCommand(name?: string): CliCommand {
    const command = new CliCommand(name);
    command.prefix = this.prefix;
    // `<program> help <command...>` covers every level; a group has no help command of its own.
    return command.helpCommand(false);
  }

  override createHelp(): Help {
    return Object.assign(new CliHelp(), this.configureHelp());
  }

  /** A group of commands (`key create`, `key revoke`): it does nothing itself. */
  group(name: string, description: string): CliCommand {
    return this.command(name).description(description).usage("<command>") as CliCommand;
  }

  /** Example command lines under the help. */
  examples(...lines: string[]): this {
    return this.addHelpText("after", `\nExamples:\n${lines.map((line) => `  $ ${line}`).join("\n")}`);
  }

  /** The command's words after the program's name: "key create". */
  path(...more: string[]): string {
    const names = [...more];
    for (let command: Command | null = this; command?.parent; command = command.parent) names.unshift(command.name());
    return names.join(" ");
  }

  /** Every usage error, commander's own and ours, is worded as before, has the prefix, and exits 2. */
  override error(message: string, options: { code?: string; exitCode?: number } = {}): never {
    const code = options.code ?? USAGE;
    const text = code.startsWith("commander.") ? this.reword(message, code) : message;
    return super.error(`${this.prefix}${text}`, { code, exitCode: 2 });
  }

  private reword(message: string, code: string): string {
    // Commander's suggestion ("(Did you mean --concurrency?)") is on a line of its own: kept as it is.
    const [first = "", ...suggestion] = message.replace(/^error: /, "").split("\n");
    let sentence = `${first.charAt(0).toUpperCase()}${first.slice(1)}${first.endsWith(".") ? "" : "."}`;
    if (code === "commander.unknownCommand") sentence = `unknown command '${this.path(this.args[0] ?? "")}'.`;
    if (code === "commander.unknownOption" && suggestion.length === 0)
      suggestion.push(...this.optionsStartingLike(/'([^']+)'/.exec(first)?.[1] ?? ""));
    if (code === "commander.missingArgument" || code === "commander.excessArguments") {
      sentence = `Expected ${this.registeredArguments.length} argument(s), got ${this.args.length}.`;
    }
    return [sentence, ...suggestion].join("\n");
  }

  /**
   * Commander suggests an option within a few letters' edits; a flag cut short (`--expire` for
   * `--expires-in`) is further off than that, and is what people type most.
   */
  private optionsStartingLike(flag: string): string[] {
    if (!flag.startsWith("--") || flag.length < 4) return [];
    const longs = this.options.flatMap((option) => (option.long && option.long.startsWith(flag) ? [option.long] : []));
    return longs.length ? [`(Did you mean ${longs.join(" or ")}?)`] : [];
  }

  /**
   * An option the command cannot do without. Unlike commander's requiredOption it is checked after
   * unknown options and the arguments, so that a misspelt `--dri` is named as such.
   */
  needs(flags: string, why: string, parse?: ((text: string) => unknown) | readonly string[]): this {
    const option = this.createOption(flags, `${why} (required)`);
    if (typeof parse === "function") option.argParser(parse);
    else if (parse) option.choices(parse);
    this.needed.push({ option, why });
    return this.addOption(option);
  }

  /** "pull needs --dir DIR: where the files go." */
  checkNeeded(): void {
    for (const { option, why } of this.needed) {
      if (this.getOptionValue(option.attributeName()) !== undefined) continue;
      if (option.argChoices) this.error(mustBe(option.long!, option.argChoices));
      this.error(
        `${this.path()} needs ${option.long} ${/<(.+)>/.exec(option.flags)?.[1]?.toUpperCase() ?? ""}: ${why}.`,
      );
    }
  }

  /** Commander asks for help as an error when a command that has subcommands is given none. */
  override help(context?: HelpContext | ((text: string) => string)): never {
    if (typeof context !== "object" || !context.error) return super.help(context as HelpContext);
    if (!this.parent) {
      // The program alone: its usage on stdout, as `--help` would, but exit 2.
      this.outputHelp();
      throw new CommanderError(2, USAGE, "no command given");
    }
    const choices = this.commands.map((c) => this.path(c.name()));
    return this.error(
      `unknown command '${this.path()}'.\n(Did you mean ${choices.length > 1 ? "one of " : ""}${choices.join(", ")}?)`,
    );
  }

  /**
   * A value parser (see values.ts) that throws InvalidArgumentError says what the option takes
   * ("takes a whole number from 1 to 64."), and the option's flag is put before it; commander's
   * `choices()` is worded by `mustBe`; a UsageError is shown as written.
   */
  override addOption(option: Option): this {
    wrapParser(this, option, option.long ?? option.flags);
    return super.addOption(option);
  }

  override addArgument(argument: Argument): this {
    wrapParser(this, argument, argument.name());
    return super.addArgument(argument);
  }

  /** A UsageError from a command's work is reported like commander's own, with its usage. */
  override action(work: (this: this, ...args: any[]) => void | Promise<void>): this {
    return super.action(async (...args: unknown[]) => {
      try {
        await work.apply(this, args);
      } catch (error) {
        if (error instanceof UsageError) this.error(error.message);
        throw error;
      }
    });
  }
}

function wrapParser(command: CliCommand, target: Option | Argument, flag: string): void {
  const parse = target.parseArg;
  if (!parse) return;
  target.parseArg = <T>(value: string, previous: T): T => {
    try {
      return parse.call(target, value, previous) as T;
    } catch (error) {
      if (error instanceof InvalidArgumentError)
        command.error(target.argChoices ? mustBe(flag, target.argChoices) : `${flag} ${error.message}`);
      if (error instanceof UsageError) command.error(error.message);
      throw error;
    }
  };
}

/** Lists every command of the program (`key create`, not `key`) in the program's help. */
class CliHelp extends Help {
  private listing: Command | undefined;

  override formatHelp(cmd: Command, helper: Help): string {
    this.listing = cmd;
    try {
      return super.formatHelp(cmd, helper);
    } finally {
      this.listing = undefined;
    }
  }

  // Only while formatting: commander also asks for the visible commands to suggest a name, and
  // there it must be the names one level down.
  override visibleCommands(cmd: Command): Command[] {
    const visible = super.visibleCommands(cmd);
    return this.listing ? visible.flatMap((sub) => (sub.commands.length ? this.visibleCommands(sub) : [sub])) : visible;
  }

  override subcommandTerm(cmd: Command): string {
    const names: string[] = [];
    for (let parent = cmd.parent; parent && parent !== this.listing; parent = parent.parent)
      names.unshift(parent.name());
    return [...names, super.subcommandTerm(cmd)].join(" ");
  }
}

/**
 * A program: `name --help`, `name help <command...>`, `name --version`, and commander's suggestion
 * of the closest command or option after a mistake.
 */
export function cliProgram(options: {
  name: string;
  usage: string;
  description: string;
  prefix: string;
  footer: string;
}): CliCommand {
  const program = new CliCommand(options.name);
  program.prefix = options.prefix;
  return (
    program
      .usage(options.usage)
      .description(options.description)
      .version(VERSION, "-V, --version", "print the version")
      .helpOption("-h, --help", "show this help")
      .addHelpText("after", `\n${options.footer}`)
      // Options of the program only before the command: `das annotations X --version 1.1.0` is the
      // command's --version.
      .enablePositionalOptions()
      .showSuggestionAfterError()
      .showHelpAfterError()
      .hook("preAction", (_program, command) => (command as CliCommand).checkNeeded())
      .configureOutput({
        writeOut: (text) => process.stdout.write(text),
        writeErr: (text) => process.stderr.write(text),
      })
      // Commander throws instead of exiting, so that every exit goes through runProgram.
      .exitOverride()
  );
}

/**
 * Runs the command the arguments name, and resolves to the process's exit code. A failure is
 * described by `explain` on stderr (exit 1); usage errors are reported already (exit 2). `explain`
 * may load what it compares the error with: the modules a command needs are loaded when it runs.
 */
export async function runProgram(
  program: CliCommand,
  argv: string[],
  explain: (error: unknown) => string | Promise<string>,
): Promise<number> {
  // Added here, after every other command, so that it is listed last.
  program
    .command("help")
    .argument("[command...]", "the command's words")
    .description("show the usage of a command")
    .action(async (names: string[]) => {
      // The same error, with the same suggestion, as running that command would give.
      const unknown = unknownCommandWords(program, names);
      if (unknown) await program.parseAsync(unknown, { from: "user" });
      let target: Command = program;
      for (const [i, name] of names.entries()) {
        const next = target.commands.find((c) => c.name() === name);
        // Words past a command that has no subcommands (`help pull extra`).
        if (!next) return (target as CliCommand).error(`unknown command '${[...names.slice(0, i + 1)].join(" ")}'.`);
        target = next;
      }
      target.help();
    });
  try {
    // Commander acts on --help before it looks the command up: `das nosuch --help` would print the
    // program's help and exit 0, as if `nosuch` were a command. Parsed alone, those words give the
    // unknown command's error (exit 2), as `das help nosuch` does.
    const end = argv.indexOf("--");
    const asksHelp = (end < 0 ? argv : argv.slice(0, end)).some((arg) => arg === "-h" || arg === "--help");
    // The command words end at the first option (a program option's value could look like a word).
    const firstOption = argv.findIndex((arg) => arg.startsWith("-"));
    const unknown = asksHelp ? unknownCommandWords(program, firstOption < 0 ? argv : argv.slice(0, firstOption)) : null;
    await program.parseAsync(unknown ?? argv, { from: "user" });
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode;
    if (error instanceof Exit) return error.code;
    if (error instanceof UsageError) {
      say(`${program.prefix}${error.message}`);
      return 2;
    }
    say(await explain(error));
    return 1;
  }
}

/**
 * `words` up to the first that names no command at its level (`nosuch`, `key crate`), or null when
 * each names one until a command without subcommands (whose arguments the rest are) or the end.
 */
function unknownCommandWords(program: Command, words: string[]): string[] | null {
  let level: Command = program;
  for (const [i, word] of words.entries()) {
    if (!level.commands.length) return null;
    const next = level.commands.find((c) => c.name() === word);
    if (!next) return words.slice(0, i + 1);
    level = next;
  }
  return null;
}
