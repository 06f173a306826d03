// `kvqual schema`: prints the JSON Schema of the replay configuration, for editors and CI checks.
import type { Command } from 'commander';
import { replayConfigJsonSchema } from '../config/schema';
import type { CliIo } from './io';
import { ExitCode, jsonText } from './io';

export function registerSchema(program: Command, io: CliIo, finish: (code: ExitCode) => void): void {
  program
    .command('schema')
    .description('print the JSON Schema of the replay configuration')
    .action(() => {
      io.stdout(jsonText(replayConfigJsonSchema()));
      finish(ExitCode.clean);
    });
}
