// The error every trace reader raises for a bad line: it names the file, the 1-based line and the
// problem, so a user can fix the row (agentic and Mooncake traces share it).
export class TraceLineError extends Error {
  constructor(
    readonly source: string,
    readonly line: number,
    readonly problem: string,
  ) {
    super(`${source}: line ${line}: ${problem}`);
    this.name = new.target.name;
  }
}
