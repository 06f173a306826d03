// Whether another process is still running: the outputs of a killed replay and the run folders
// of a killed qualify are removed by the next run, never those of a process still writing them.

/** Whether the process `pid` is running (one that exists but is not ours to signal counts as running). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}
