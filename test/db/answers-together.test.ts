// PostgreSQL's answers are handed on together: what arrives in one turn of the loop goes on at its
// check phase, in the order it arrived, and nothing given later is held back past the next one.
import { describe, expect, it } from 'vitest'
import { answersTogether } from '../../src/db/answers-together.js'

describe('answersTogether', () => {
  it('hands on what was given in one turn together, in order, at the check phase', async () => {
    const together = answersTogether()
    const seen: string[] = []
    const handedOn = [together('a'), together('b'), together('c')].map((answer) => answer.then((value) => seen.push(value)))
    // Not before the loop's check phase: the microtasks of this turn run first.
    await Promise.resolve()
    await Promise.resolve()
    expect(seen).toEqual([])
    // Scheduled after the hand-on: it runs once all three have gone on, not between them.
    const after = new Promise<void>((resolve) =>
      setImmediate(() => {
        seen.push('next immediate')
        resolve()
      }),
    )
    await Promise.all([...handedOn, after])
    expect(seen).toEqual(['a', 'b', 'c', 'next immediate'])
  })

  it('hands on what is given while handing on at the next check phase', async () => {
    const together = answersTogether()
    const second = await together(1).then(() => together(2))
    expect(second).toBe(2)
    const values = await Promise.all([together({ rows: [1] }), together(undefined), together(null)])
    expect(values).toEqual([{ rows: [1] }, undefined, null])
  })
})
