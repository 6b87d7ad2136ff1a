// The client's retry rules on answers a live server does not give on demand (503 with and without
// Retry-After, retries running out), over a fetch that answers from a script.
import { describe, expect, it } from 'vitest'
import { createClientFetch, parseRetryAfter } from '../../src/client/client-fetch.js'

function scripted(answers: Response[]) {
  const seen: string[] = []
  const fetch = (async (input: RequestInfo | URL) => {
    seen.push(input instanceof Request ? input.method : 'GET')
    const next = answers.shift()
    if (next === undefined) throw new Error('no more answers')
    return next
  }) as typeof globalThis.fetch
  return { fetch, seen }
}

const answer = (status: number, headers: Record<string, string> = {}) => new Response(status === 204 ? null : '{}', { status, headers })

describe('the client fetch', () => {
  it('retries a 503 with Retry-After after that many seconds, and succeeds', async () => {
    const { fetch, seen } = scripted([answer(503, { 'Retry-After': '2' }), answer(200)])
    const waits: number[] = []
    const clientFetch = createClientFetch({ fetch, maxRetries: 3, etagCache: false, sleep: async (ms) => void waits.push(ms) })
    expect((await clientFetch(new Request('http://x/api/v1/users'))).status).toBe(200)
    expect({ requests: seen.length, waits }).toEqual({ requests: 2, waits: [2000] })
  })

  it('does not retry a 503 without Retry-After', async () => {
    const { fetch, seen } = scripted([answer(503), answer(200)])
    const clientFetch = createClientFetch({ fetch, maxRetries: 3, etagCache: false, sleep: async () => undefined })
    expect((await clientFetch(new Request('http://x/api/v1/users'))).status).toBe(503)
    expect(seen.length).toBe(1)
  })

  it('gives up after maxRetries retries of a 429 and returns the last answer', async () => {
    const { fetch, seen } = scripted([
      answer(429, { 'Retry-After': '1' }),
      answer(429, { 'Retry-After': '1' }),
      answer(429, { 'Retry-After': '1' }),
      answer(200),
    ])
    const clientFetch = createClientFetch({ fetch, maxRetries: 2, etagCache: false, sleep: async () => undefined })
    expect((await clientFetch(new Request('http://x/api/v1/users', { method: 'POST', body: '{"a":1}' }))).status).toBe(429)
    expect(seen).toEqual(['POST', 'POST', 'POST'])
  })

  it('reads Retry-After as seconds or as an HTTP date', () => {
    const now = Date.parse('2026-11-26T00:00:00Z')
    expect(parseRetryAfter('3', now)).toBe(3)
    expect(parseRetryAfter('Thu, 26 Nov 2026 00:00:05 GMT', now)).toBe(5)
    expect(parseRetryAfter(null, now)).toBeUndefined()
    expect(parseRetryAfter('soon', now)).toBeUndefined()
  })
})
