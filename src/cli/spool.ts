// Import reads its file twice (check, then write), and a pipe or a FIFO gives its bytes only once:
// `cat db.json | threadline import /dev/stdin` would check one text and write another (or none).
// Such a file is copied as it is read (streamed, never held) to a temporary file that only its
// owner can read; both passes read the copy, and it is removed at the end. The copy is made by the
// first process, so the bounded heap (bounded-heap.ts) is sized for what it holds, and handed to the
// process that imports with --spool. What is copied is judged as it comes: a start that no data file
// has (bytes that are not JSON, a first value that is not an object: /dev/zero, a binary) is refused
// at once, and a stream longer than the bound is refused when it passes it, so a stream that never
// ends cannot fill the disk.
import { type Stats, createReadStream, createWriteStream, statSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { withThousands } from '../core/digits.js'
import { AppError } from '../errors.js'
import { Problems, ImportProblemsError, notJsonError } from './import-report.js'
import { BadJsonError, DataFileStart, NotAnObjectError, TOP_LEVEL, notAnObject } from './json-sections.js'
import { MAX_PIPE_MB, SPOOL_OPTION } from './spool-options.js'

/** The first bytes judged (DataFileStart); past them, only the bound is. */
const JUDGED_BYTES = 64 * 1024

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

export interface RereadableOptions {
  /** The copy this command's first process made (--spool). */
  spooled?: string | undefined
  /** The most a stream may give, in MiB. @default MAX_PIPE_MB */
  maxPipeMb?: number | undefined
}

/**
 * Runs `run` with a path that reads the same twice for `file`: the copy this command's first
 * process made (`spooled`), `file` itself when it is a regular file, or a copy made now and removed
 * when `run` ends. `run` also gets the arguments that hand the copy on to a process it starts.
 * Throws, before `run`, for a stream that starts as no data file does or passes the bound.
 */
export async function withRereadableFile<T>(file: string, options: RereadableOptions, run: (path: string, handOn: string[]) => Promise<T>): Promise<T> {
  if (options.spooled !== undefined) return run(options.spooled, [])
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
      await pipeline(source(), judged(file, options.maxPipeMb ?? MAX_PIPE_MB), createWriteStream(path, { flags: 'wx', mode: 0o600 }), {
        signal: stopped.signal,
      })
    } finally {
      for (const signal of signals) process.off(signal, stop)
    }
    return await run(path, [SPOOL_OPTION, path])
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

/** The stage of the copy that judges its first bytes and counts them all; its refusals are import's own. */
function judged(name: string, maxPipeMb: number) {
  const most = maxPipeMb * 2 ** 20
  return async function* (chunks: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
    const start = new DataFileStart()
    let copied = 0
    for await (const chunk of chunks) {
      if (copied < JUDGED_BYTES) await start.take(chunk).catch((error: unknown) => refuseStart(name, error))
      copied += chunk.length
      if (copied > most) {
        throw new AppError(
          'PAYLOAD_TOO_LARGE',
          `${name}: more than ${withThousands(maxPipeMb)} MiB came through it, the most a pipe, FIFO or device may give (--max-pipe-mb); nothing was imported. Save it to a file and import that (a file is read in place, whatever its size)`,
        )
      }
      yield chunk
    }
  }
}

/** Import's own refusal of a start DataFileStart refused: the words the whole file's check would say. */
async function refuseStart(name: string, error: unknown): Promise<never> {
  if (error instanceof BadJsonError) throw notJsonError(name, error)
  if (!(error instanceof NotAnObjectError)) throw error
  // The sections a file may have are the features': loaded for the words of this refusal only, so
  // that the process that copies and waits does not hold the importer's code (bounded-heap.ts).
  const [{ DATA_SECTIONS }, { importRules }] = await Promise.all([import('./data-sections.js'), import('./import-rows.js')])
  const problems = new Problems()
  problems.add(TOP_LEVEL, notAnObject(importRules(DATA_SECTIONS).sections.map((section) => section.name)))
  throw new ImportProblemsError(name, problems, DATA_SECTIONS)
}
