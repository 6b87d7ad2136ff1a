// Vary is built by several hands: CORS names Origin on the request, caching names what a kept
// answer depends on, compression names Accept-Encoding, the pages name theirs. Fastify's
// reply.header replaces a header, so each adds through here and none drops another's names.
import type { FastifyReply } from 'fastify'

/** Vary gains the names it lacks (compared case-insensitively), each once, after those it holds; `*` holds all. */
export function addVary(reply: FastifyReply, ...names: readonly string[]): void {
  addNames(reply, reply.getHeader('vary'), names, names.join('\n'))
}

/**
 * addVary of names known ahead, for an answer path taken by every request: the names are joined
 * once, and their merge into an answer that has no Vary yet (the usual case) is worked out once.
 */
export function varyAdder(...names: readonly string[]): (reply: FastifyReply) => void {
  const joined = names.join('\n')
  const intoNone = merge(undefined, names)
  return (reply) => {
    const vary = reply.getHeader('vary')
    if (vary !== undefined) addNames(reply, vary, names, joined)
    else if (intoNone !== null) reply.header('vary', intoNone)
  }
}

function addNames(reply: FastifyReply, vary: ReturnType<FastifyReply['getHeader']>, names: readonly string[], joined: string): void {
  // A handful of headers meet a handful of name lists: each merge is worked out once.
  const key = Array.isArray(vary) ? undefined : `${vary === undefined ? '' : String(vary)}\n${joined}`
  let merged = key === undefined ? undefined : merges.get(key)
  if (merged === undefined) {
    merged = merge(vary, names)
    if (key !== undefined && merges.size < MAX_MERGES) merges.set(key, merged)
  }
  if (merged !== null) reply.header('vary', merged)
}

/** Merges worked out, by the header held and the names added; null: the header stays as it is. */
const merges = new Map<string, string | null>()
const MAX_MERGES = 256

function merge(vary: ReturnType<FastifyReply['getHeader']>, names: readonly string[]): string | null {
  const held = (Array.isArray(vary) ? vary : vary === undefined ? [] : [String(vary)])
    .flatMap((value) => value.split(','))
    .map((name) => name.trim())
    .filter((name) => name !== '')
  const seen = new Set(held.map((name) => name.toLowerCase()))
  if (seen.has('*')) return null
  const added: string[] = []
  for (const name of names) {
    const lower = name.toLowerCase()
    if (seen.has(lower)) continue
    seen.add(lower)
    added.push(name)
  }
  if (added.length === 0) return null
  return seen.has('*') ? '*' : [...held, ...added].join(', ')
}
