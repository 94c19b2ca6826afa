/**
 * True when a process with this pid exists (signal 0 probes without signalling). EPERM means it
 * exists but belongs to another user, so it counts as alive. Used to tell a stale lock or build
 * directory (its process was killed) from one in use.
 */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as { code?: string }).code === 'EPERM';
  }
}
