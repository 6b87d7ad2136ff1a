// A large import keeps far more heap than it holds: the JSON parser makes garbage fast and V8 grows
// the old generation lazily. A 1,000,000-row file (218 MB) peaked at 458 MB of RSS with Node's
// default heap and at 228 MB with the old generation bound to 160 MB, in the same 104 s (by hand,
// /usr/bin/time; bench:import measures it). So a command that reads a whole file runs in a Node
// whose heap is bounded by the file's size: this process starts the same command again with
// --max-old-space-size and hands on its exit code. The flag can only be given at start-up.
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { statSync } from 'node:fs'
import { constants } from 'node:os'

const HEAP_FLAG = '--max-old-space-size'

/**
 * The old generation's bound in MB for reading a file of `fileBytes`: 64 MB and half the file's
 * size, at least 128 MB. What an import keeps between its passes (ids, references) is about 0.4
 * byte per byte of file, so the bound grows with what it must hold and never starves it.
 */
export function heapBoundMb(fileBytes: number): number {
  return Math.max(128, Math.round(64 + fileBytes / 2 / 2 ** 20))
}

/**
 * When this process's heap is unbounded, runs the same command again (with `extraArgs` after its
 * own) in a Node bounded for `file` and resolves with its exit code; undefined when this process is
 * that Node already (or the file cannot be read: the command itself says why).
 */
export async function rerunWithBoundedHeap(file: string, extraArgs: string[] = []): Promise<number | undefined> {
  if (process.execArgv.some((arg) => arg.startsWith(HEAP_FLAG))) return undefined
  let size: number
  try {
    size = statSync(file).size
  } catch {
    return undefined
  }
  const child = spawn(process.execPath, [...process.execArgv, `${HEAP_FLAG}=${heapBoundMb(size)}`, ...process.argv.slice(1), ...extraArgs], {
    stdio: 'inherit',
  })
  // A terminal's Ctrl-C reaches both processes; a signal sent to this one alone is passed on, and
  // the child decides (an import stopped midway rolls its transaction back).
  const forward = (signal: NodeJS.Signals) => child.kill(signal)
  const signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP']
  for (const signal of signals) process.on(signal, forward)
  try {
    const [code, signal] = (await once(child, 'exit')) as [number | null, NodeJS.Signals | null]
    return code ?? 128 + (signal === null ? 0 : constants.signals[signal])
  } finally {
    for (const signal of signals) process.off(signal, forward)
  }
}
