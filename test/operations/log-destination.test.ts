// The log's lines gathered before they are written (src/operations/log-destination.ts): in the order
// written, handed on together once enough wait, and the rest on flush (every 100 ms, and at exit:
// test/cli/log-format.test.ts and test/cli/shutdown.test.ts read a real server's lines).
import { describe, expect, it } from 'vitest'
import { GatheredLines } from '../../src/operations/log-destination.js'

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
})
