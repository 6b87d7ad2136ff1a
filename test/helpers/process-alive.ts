// Whether a process still runs: a lock or a database left by a run that was killed names a process
// that is gone.

/** True while process `pid` exists, ours or another user's (EPERM: it exists, we may not signal it). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as { code?: string }).code === 'EPERM'
  }
}
