// Loaded with `node --require` before a command the benchmarks time from outside (bench/cliReplay.ts):
// prints the process's peak resident set, in KB, as the last line of standard error when it exits
// ("peak_rss_kb N"). Node tells a process its own peak, not a child's.
'use strict';
process.on('exit', () => {
  process.stderr.write(`peak_rss_kb ${process.resourceUsage().maxRSS}\n`);
});
