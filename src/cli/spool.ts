// Import reads its file twice (check, then write), and a pipe or a FIFO gives its bytes only once:
// `cat db.json | threadline import /dev/stdin` would check one text and write another (or none).
// Such a file is copied as it is read (streamed, never held) to a temporary file that only its
// owner can read; both passes read the copy, and it is removed at the end. The copy is made by the
// first process, so the bounded heap (bounded-heap.ts) is sized for what it holds, and handed to the
// process that imports with --spool.
import { type Stats, createReadStream, createWriteStream, statSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'

/** The hidden option that hands a copy to the process that reads it (src/main.ts). */
export const SPOOL_OPTION = '--spool'

/** The names of this process's standard input. */
const STDIN = ['/dev/stdin', '/dev/fd/0', '/proc/self/fd/0']

/**
 * How to read `file` once, when reading it consumes it: a pipe, a FIFO, a device such as a
 * terminal, or a standard input that is a socket (as a parent Node's 'pipe' gives, which cannot be
 * opened by name). Undefined for a regular file, and for a missing one (the reader reports it).
 */
function readOnce(file: string): (() => Readable) | undefined {
  let stat: Stats
  try {
    stat = statSync(file)
  } catch {
    return undefined
  }
  if (stat.isSocket() && STDIN.includes(file)) return () => createReadStream('', { fd: 0 })
  return stat.isFIFO() || stat.isCharacterDevice() ? () => createReadStream(file) : undefined
}

/**
 * Runs `run` with a path that reads the same twice for `file`: the copy this command's first
 * process made (`spooled`), `file` itself when it is a regular file, or a copy made now and removed
 * when `run` ends. `run` also gets the arguments that hand the copy on to a process it starts.
 */
export async function withRereadableFile<T>(file: string, spooled: string | undefined, run: (path: string, handOn: string[]) => Promise<T>): Promise<T> {
  if (spooled !== undefined) return run(spooled, [])
  const source = readOnce(file)
  if (source === undefined) return run(file, [])
  const dir = await mkdtemp(join(tmpdir(), 'threadline-import-'))
  // Stopped while it copies (Ctrl-C on a pipe that never ends), the copy is removed all the same;
  // later, the process that imports decides (bounded-heap.ts) and this one waits for it.
  const stopped = new AbortController()
  const stop = () => stopped.abort()
  const signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP']
  try {
    const path = join(dir, 'input.json')
    for (const signal of signals) process.on(signal, stop)
    try {
      await pipeline(source(), createWriteStream(path, { flags: 'wx', mode: 0o600 }), { signal: stopped.signal })
    } finally {
      for (const signal of signals) process.off(signal, stop)
    }
    return await run(path, [SPOOL_OPTION, path])
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}
