// Vary is built by several hands: CORS names Origin on the request, caching names what a kept
// answer depends on, compression names Accept-Encoding, the pages name theirs. Fastify's
// reply.header replaces a header, so each adds through here and none drops another's names.
import type { FastifyReply } from 'fastify'

/** Vary gains the names it lacks (compared case-insensitively), each once, after those it holds; `*` holds all. */
export function addVary(reply: FastifyReply, ...names: readonly string[]): void {
  const vary = reply.getHeader('vary')
  const held = (Array.isArray(vary) ? vary : vary === undefined ? [] : [String(vary)])
    .flatMap((value) => value.split(','))
    .map((name) => name.trim())
    .filter((name) => name !== '')
  const seen = new Set(held.map((name) => name.toLowerCase()))
  if (seen.has('*')) return
  const added: string[] = []
  for (const name of names) {
    const key = name.toLowerCase()
    if (seen.has(key)) continue
    seen.add(key)
    added.push(name)
  }
  if (added.length === 0) return
  reply.header('vary', seen.has('*') ? '*' : [...held, ...added].join(', '))
}
