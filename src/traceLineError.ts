// The error every line-by-line reader raises for a bad input: it names the file, the 1-based line
// (or none, for a problem of the whole file such as "no requests") and the problem, so a user can
// fix the row. The agentic and Mooncake trace readers share it, and so does the line reader.
export class TraceLineError extends Error {
  constructor(
    readonly source: string,
    readonly line: number | null,
    readonly problem: string,
  ) {
    super(line === null ? `${source}: ${problem}` : `${source}: line ${line}: ${problem}`);
    this.name = new.target.name;
  }
}
