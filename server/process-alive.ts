// Whether a PID names a live process, including one of another user (the `postgres`
// user's server, seen from root or the reverse).
import { readFileSync } from 'node:fs';

export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  // A zombie (exited, not yet reaped by a parent that never waits) still answers signal 0.
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch (error) {
    // Gone between the two checks, or no /proc (not Linux): then signal 0 is all we know.
    return (error as NodeJS.ErrnoException).code !== 'ENOENT' || process.platform !== 'linux';
  }
}
