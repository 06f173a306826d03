// The kvqual command line: one commander program; each subcommand lives in its own module under
// src/cli/ and registers itself here. Owns turning a parse into an exit code (see ExitCode):
// commander's own usage errors become 2 and print one line naming the unknown command or option
// and the nearest valid one; help and --version exit 0.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Command, CommanderError } from 'commander';
import { registerCheckEvents } from './checkEvents';
import { registerQualify } from './qualify';
import { registerReplay } from './replay';
import { compareFile } from './compare';
import { registerSchema } from './schema';
import { registerSweep } from './sweep';
import type { CliIo } from './io';
import { ExitCode } from './io';
import { printable } from '../inputFiles';

// What bin/kvqual.js needs of io.ts, from here: the compiled command line is one bundle (bin/compiled.js).
export { ExitCode, processIo, statusAfterOutput } from './io';

/**
 * The version in kvqual's package.json: the nearest one above this module whose name is kvqual (the
 * sources run from src/cli, the compiled coverage run from build/src/cli).
 */
export function kvqualVersion(): string {
  for (let dir = __dirname; ; dir = path.dirname(dir)) {
    const file = path.join(dir, 'package.json');
    if (fs.existsSync(file)) {
      const manifest = JSON.parse(fs.readFileSync(file, 'utf8')) as { name?: string; version: string };
      if (manifest.name === 'kvqual') return manifest.version;
    }
    if (path.dirname(dir) === dir) throw new Error(`kvqual's package.json was not found above ${__dirname}`);
  }
}

/** Runs kvqual with the arguments after the program name; returns the exit code (synchronous commands only: not sweep, not qualify). */
export function runCli(args: readonly string[], io: CliIo): ExitCode {
  const { program, exitCode } = buildProgram(io);
  try {
    program.parse([...args], { from: 'user' });
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? ExitCode.clean : ExitCode.usage;
    throw error;
  }
  return exitCode();
}

/** Runs kvqual with the arguments after the program name, awaiting asynchronous commands (sweep, qualify); resolves with the exit code. */
export async function runCliAsync(args: readonly string[], io: CliIo): Promise<ExitCode> {
  const { program, exitCode } = buildProgram(io);
  try {
    await program.parseAsync([...args], { from: 'user' });
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? ExitCode.clean : ExitCode.usage;
    throw error;
  }
  return exitCode();
}

const PROGRAM_HELP_AFTER = `
Run \`kvqual <command> --help\` for a command's options.

Exit status: 0 clean (qualify: QUALIFIED), 1 a rule violation found (qualify: NOT QUALIFIED),
2 a usage error or bad input, 3 an internal error in kvqual (please report it).`;

function buildProgram(io: CliIo): { program: Command; exitCode: () => ExitCode } {
  let exitCode: ExitCode = ExitCode.clean;
  const program = new Command('kvqual')
    .description('Executable-specification harness for KV-cache-aware LLM routing')
    .version(kvqualVersion(), '-V, --version', 'print the kvqual version')
    .exitOverride()
    // A subcommand's options are its own wherever they stand (`sweep merge … --out DIR` is merge's --out, not sweep's).
    .enablePositionalOptions()
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr })
    .addHelpText('after', PROGRAM_HELP_AFTER);
  const finish = (code: ExitCode): void => {
    exitCode = code;
  };
  registerCheckEvents(program, io, finish);
  registerQualify(program, io, finish);
  registerReplay(program, io, finish, compareFile);
  registerSchema(program, io, finish);
  registerSweep(program, io, finish);
  const all = (command: Command): Command[] => [command, ...command.commands.flatMap(all)];
  for (const command of all(program)) {
    command.exitOverride();
    command.configureOutput({ writeOut: io.stdout, writeErr: io.stderr, outputError: (text, write) => write(`${usageLine(command, text)}\n`) });
  }
  return { program, exitCode: () => exitCode };
}

/** The full name of a command: "kvqual" or "kvqual replay". */
function commandName(command: Command): string {
  return command.parent ? `${commandName(command.parent)} ${command.name()}` : command.name();
}

/**
 * Commander's error as one line: "kvqual replay: unknown option '--ot'; did you mean --out?", or
 * when nothing is close, the valid commands or options; then where the usage is.
 */
function usageLine(command: Command, text: string): string {
  const [first, ...rest] = text.trim().replace(/^error: /, '').split('\n');
  const suggestion = /^\(Did you mean (.+)\?\)$/.exec(rest.join(' ').trim());
  let line = printable(first, 200);
  if (suggestion) line += `; did you mean ${suggestion[1]}?`;
  else if (first.startsWith('unknown command')) line += `; the commands are ${command.commands.map((sub) => sub.name()).join(', ')}`;
  else if (first.startsWith('unknown option')) {
    const options = command.options.map((option) => option.long).filter((long): long is string => long !== undefined);
    line += `; the options are ${[...options, '--help'].join(', ')}`;
  }
  return `${commandName(command)}: ${line} (see ${commandName(command)} --help)`;
}
