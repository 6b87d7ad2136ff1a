// The log's lines gathered before they are written (src/operations/log-destination.ts): in the order
// written, handed on together once enough wait, and the rest on flush (every 100 ms, and at exit:
// test/cli/log-format.test.ts and test/cli/shutdown.test.ts read a real server's lines). Written
// through a real pipe (a FIFO) whose reader stops reading: the loop goes on, what does not fit is
// dropped, and the next line written says how many.
// Runs once, on SQLite: the log's lines never touch the store.
import { execFileSync } from 'node:child_process'
import { closeSync, constants, mkdtempSync, openSync, readSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setImmediate as turn } from 'node:timers/promises'
import { describe, expect, it } from 'vitest'
import { GatheredLines, PacedWriter } from '../../src/operations/log-destination.js'
import { until } from '../helpers/until.js'

describe('gathered log lines', () => {
  it('are handed on together, in order, once enough characters wait', () => {
    const written: string[] = []
    const lines = new GatheredLines((text) => written.push(text), 10)
    lines.write('{"a":1}\n')
    expect(written).toEqual([])
    lines.write('{"b":2}\n')
    expect(written).toEqual(['{"a":1}\n{"b":2}\n'])
    lines.write('{"c":3}\n')
    expect(written).toEqual(['{"a":1}\n{"b":2}\n'])
  })

  it('hand on what waits when flushed, and nothing when nothing waits, then say so', () => {
    const written: string[] = []
    const lines = new GatheredLines((text) => written.push(text), 4096)
    lines.flush()
    expect(written).toEqual([])
    lines.write('one\n')
    lines.write('two\n')
    let done = 0
    lines.flush(() => done++)
    lines.flush()
    expect(written).toEqual(['one\ntwo\n'])
    expect(done).toBe(1)
  })

  it('are handed on at most the wait after the first of them, and so are those written after a batch handed on for its size', async () => {
    const written: string[] = []
    const lines = new GatheredLines((text) => written.push(text), 10, 50)
    lines.write('one\n')
    lines.write('two\n')
    expect(written).toEqual([])
    await until(() => written.length === 1, 2000)
    expect(written).toEqual(['one\ntwo\n'])
    lines.write('a long line\n')
    lines.write('three\n')
    expect(written).toEqual(['one\ntwo\n', 'a long line\n'])
    await until(() => written.length === 3, 2000)
    expect(written[2]).toBe('three\n')
  })
})

describe('the paced writer', () => {
  it('leaves the loop free while its reader does not read, drops what does not fit, and says how many it dropped', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'threadline-log-'))
    const fifo = join(dir, 'log')
    execFileSync('mkfifo', [fifo])
    // The reader's end first, not waiting for a writer; the writer's end blocking, as stdout is.
    const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK)
    const writer = openSync(fifo, constants.O_WRONLY)
    try {
      const out = new PacedWriter(writer, 10_000)
      const line = `${JSON.stringify({ msg: 'x'.repeat(90) })}\n`
      const batches = 100
      const perBatch = 100
      // 1 MB of lines, a batch a loop turn: far past what the pipe holds (64 KB) and what may wait.
      // Written synchronously, the first write past the pipe's size would hold this loop for good.
      for (let i = 0; i < batches; i++) {
        out.write(line.repeat(perBatch))
        await turn()
      }
      let read = ''
      const chunk = Buffer.alloc(65_536)
      const drain = () => {
        for (;;) {
          try {
            const n = readSync(reader, chunk, 0, chunk.length, null)
            if (n === 0) return
            read += chunk.toString('utf8', 0, n)
          } catch {
            return // EAGAIN: nothing more now
          }
        }
      }
      const received = () => read.split('\n').filter((text) => text !== '')
      const dropped = () =>
        received()
          .map((text) => JSON.parse(text) as { msg: string; level?: number })
          .filter((entry) => entry.level === 40)
          .map((entry) => Number(/^(\d+) log lines dropped/.exec(entry.msg)?.[1]))
      // Every line is either read or counted as dropped, once the writes are over.
      await until(() => {
        drain()
        const lines = received().filter((text) => text === line.trimEnd())
        return lines.length + dropped().reduce((sum, n) => sum + n, 0) === batches * perBatch
      })
      expect(dropped().length).toBeGreaterThan(0)
      // What the metric reads: every line the warnings told of.
      expect(out.droppedInAll).toBe(dropped().reduce((sum, n) => sum + n, 0))
      expect(received().every((text) => text === line.trimEnd() || /log lines dropped: stdout was not read/.test(text))).toBe(true)
    } finally {
      closeSync(writer)
      closeSync(reader)
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
