// A one-line progress bar for long commands, drawn only when the output is a terminal.
import type { WriteStream } from 'node:tty'

export function createProgressBar(stream: NodeJS.WriteStream | WriteStream, label: string) {
  if (!stream.isTTY) return { update: () => {}, done: () => {} }
  const width = 30
  let lastDrawn = 0
  const draw = (done: number, total: number) => {
    const ratio = total === 0 ? 1 : done / total
    const filled = Math.round(ratio * width)
    const bar = '#'.repeat(filled) + '-'.repeat(width - filled)
    stream.write(`\r${label} [${bar}] ${(ratio * 100).toFixed(0).padStart(3)}% ${done}/${total}`)
  }
  return {
    update(done: number, total: number) {
      const now = Date.now()
      if (now - lastDrawn < 100 && done < total) return
      lastDrawn = now
      draw(done, total)
    },
    done() {
      stream.write('\n')
    },
  }
}
