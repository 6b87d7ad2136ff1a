// Import's progress: a bar of the file's bytes on a terminal; on anything else (a log, a pipe, CI)
// one plain line every tenth of the file, so the output holds no escape codes.
import { createProgressBar } from './progress.js'

export interface Progress {
  /** `phase` is checking (pass 1) or writing (pass 2); `read` bytes of the file's `total`. */
  update(phase: string, read: number, total: number): void
  done(): void
}

export function createImportProgress(stream: NodeJS.WriteStream | undefined): Progress {
  if (stream === undefined) return { update: () => {}, done: () => {} }
  if (stream.isTTY) {
    let phase: string | undefined
    let bar = createProgressBar(stream, '')
    return {
      update(name, read, total) {
        if (name !== phase) {
          if (phase !== undefined) bar.done()
          phase = name
          bar = createProgressBar(stream, name.padEnd(8))
        }
        bar.update(read, total)
      },
      done: () => {
        if (phase !== undefined) bar.done()
      },
    }
  }
  const shown = new Map<string, number>()
  return {
    update(name, read, total) {
      const tenth = total === 0 ? 10 : Math.floor((read / total) * 10)
      if ((shown.get(name) ?? -1) >= tenth) return
      shown.set(name, tenth)
      stream.write(`${name} ${tenth * 10}% (${megabytes(read)} of ${megabytes(total)} MB)\n`)
    },
    done: () => {},
  }
}

const megabytes = (bytes: number) => (bytes / 1_000_000).toFixed(1)
