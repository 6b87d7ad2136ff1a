// Runs once, on SQLite: addVary and varyAdder (src/http/vary.ts) merge header names; no store is involved.
// Each request sets a Vary header to start from and adds names, twice each, so that the merges
// worked out once and kept are checked against the first ones.
import Fastify, { type FastifyReply } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { addVary, varyAdder } from '../../src/http/vary.js'

describe('addVary', () => {
  const app = Fastify()
  beforeAll(async () => {
    app.get('/', { config: { access: 'public' } }, async (request, reply) => {
      const { held, add } = request.query as { held?: string; add: string }
      if (held !== undefined) reply.header('vary', held)
      addVary(reply, ...add.split('|'))
      return { vary: reply.getHeader('vary') ?? null }
    })
    // The same names through varyAdder: made once per name list, used by every request after.
    const adders = new Map<string, (reply: FastifyReply) => void>()
    app.get('/adder', { config: { access: 'public' } }, async (request, reply) => {
      const { held, add } = request.query as { held?: string; add: string }
      if (held !== undefined) reply.header('vary', held)
      let adder = adders.get(add)
      if (adder === undefined) adders.set(add, (adder = varyAdder(...add.split('|'))))
      adder(reply)
      return { vary: reply.getHeader('vary') ?? null }
    })
    await app.ready()
  })
  afterAll(() => app.close())

  const varyOf = async (add: string, held?: string, url = '/') => {
    const res = await app.inject({ url, query: held === undefined ? { add } : { add, held } })
    return res.json<{ vary: string | null }>().vary
  }

  it.each([
    ['Accept|Authorization', undefined, 'Accept, Authorization'],
    ['Accept-Encoding', 'Accept, Authorization', 'Accept, Authorization, Accept-Encoding'],
    ['accept|Accept-Encoding', 'Accept, Authorization', 'Accept, Authorization, Accept-Encoding'],
    ['Accept|Accept', undefined, 'Accept'],
    ['Accept', 'Origin,  accept', 'Origin,  accept'],
    ['Accept', '*', '*'],
    ['*|Accept', 'Origin', '*'],
    ['Accept', ' , ', 'Accept'],
  ])('adds %s to %s: %s', async (add, held, expected) => {
    // Twice: worked out, then kept.
    expect(await varyOf(add, held)).toBe(expected)
    expect(await varyOf(add, held)).toBe(expected)
    expect(await varyOf(add, held, '/adder')).toBe(expected)
    expect(await varyOf(add, held, '/adder')).toBe(expected)
  })
})
