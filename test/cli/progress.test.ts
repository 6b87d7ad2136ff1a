import { describe, expect, it } from 'vitest'
import { createProgressBar } from '../../src/cli/progress.js'

function fakeStream(isTTY: boolean) {
  const written: string[] = []
  return { stream: { isTTY, write: (text: string) => written.push(text) } as unknown as NodeJS.WriteStream, written }
}

describe('createProgressBar', () => {
  it('draws a bar on a terminal, ending at 100%', () => {
    const { stream, written } = fakeStream(true)
    const bar = createProgressBar(stream, 'seeding')
    bar.update(0, 200)
    bar.update(200, 200)
    bar.done()
    expect(written[0]).toBe(`\rseeding [${'-'.repeat(30)}]   0% 0/200`)
    expect(written[1]).toBe(`\rseeding [${'#'.repeat(30)}] 100% 200/200`)
    expect(written[2]).toBe('\n')
  })

  it('writes nothing when the output is not a terminal', () => {
    const { stream, written } = fakeStream(false)
    const bar = createProgressBar(stream, 'seeding')
    bar.update(1, 2)
    bar.done()
    expect(written).toEqual([])
  })
})
