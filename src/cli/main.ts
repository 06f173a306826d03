// The kvqual command line: one commander program; each subcommand lives in its own module under
// src/cli/ and registers itself here. Owns turning a parse into an exit code (see ExitCode):
// commander's own usage errors become 2, help and --version 0.
import { Command, CommanderError } from 'commander';
import { registerCheckEvents } from './checkEvents';
import { registerReplay } from './replay';
import { registerSchema } from './schema';
import type { CliIo } from './io';
import { ExitCode } from './io';

/** Runs kvqual with the arguments after the program name; returns the exit code. */
export function runCli(args: readonly string[], io: CliIo): ExitCode {
  let exitCode: ExitCode = ExitCode.clean;
  const program = new Command('kvqual')
    .description('Executable-specification harness for KV-cache-aware LLM routing')
    .exitOverride()
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr })
    .showHelpAfterError('(run "kvqual help" for usage)');
  const finish = (code: ExitCode): void => {
    exitCode = code;
  };
  registerCheckEvents(program, io, finish);
  registerReplay(program, io, finish);
  registerSchema(program, io, finish);
  try {
    program.parse([...args], { from: 'user' });
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? ExitCode.clean : ExitCode.usage;
    throw error;
  }
  return exitCode;
}
