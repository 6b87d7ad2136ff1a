// `Prefer: return=minimal` (RFC 7240) on the API's writes, as PostgREST has it: a client that needs
// no copy of what it wrote gets the status alone. A 201 keeps its Location, and a 200 becomes
// 204 No Content. The answer says `Preference-Applied: return=minimal`. `return=representation`
// is the default, and is said back as applied when asked for. An answer that is not a success
// keeps its body: an error is never minimal. Other preferences are ignored, as RFC 7240 has it.
import type { onSendHookHandler, RouteOptions } from 'fastify'

export type ReturnPreference = 'minimal' | 'representation'

/** The methods whose successful answers honour the preference (DELETE answers 204 already). */
export const PREFERENCE_METHODS: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH'])

/**
 * The `return` preference of the Prefer headers: `return=minimal` or `return=representation`,
 * names and values in any case, the value quoted or not, parameters after `;` ignored. When it is
 * given more than once, the first counts (RFC 7240 §2); anything else is no preference.
 */
export function returnPreference(prefer: string | string[] | undefined): ReturnPreference | undefined {
  if (prefer === undefined) return undefined
  for (const preference of (Array.isArray(prefer) ? prefer.join(',') : prefer).split(',')) {
    const [token = ''] = preference.split(';')
    const at = token.indexOf('=')
    if (at === -1 || token.slice(0, at).trim().toLowerCase() !== 'return') continue
    const value = token
      .slice(at + 1)
      .trim()
      .replace(/^"(.*)"$/, '$1')
      .toLowerCase()
    return value === 'minimal' || value === 'representation' ? value : undefined
  }
  return undefined
}

/** The preference applied to a write's answer, before it is compressed: nothing is compressed only to be dropped. */
const applyReturnPreference: onSendHookHandler = (request, reply, payload, done) => {
  const { prefer } = request.headers
  if (prefer === undefined || !PREFERENCE_METHODS.has(request.method) || (reply.statusCode !== 200 && reply.statusCode !== 201)) return done(null, payload)
  const preference = returnPreference(prefer)
  if (preference === undefined) return done(null, payload)
  reply.header('preference-applied', `return=${preference}`)
  if (preference === 'representation') return done(null, payload)
  if (reply.statusCode === 200) reply.code(204)
  reply.removeHeader('content-type')
  done(null, null)
}

/**
 * For the API's routes (an onRoute hook of their plugin): a write route applies the return
 * preference, first of its own onSend hooks (compression's among them). Reads carry no hook.
 */
export function honourReturnPreference(route: RouteOptions): void {
  const methods = ([] as string[]).concat(route.method)
  if (!methods.some((method) => PREFERENCE_METHODS.has(method))) return
  const hooks = route.onSend
  if (hooks === undefined) route.onSend = [applyReturnPreference]
  else route.onSend = Array.isArray(hooks) ? [applyReturnPreference, ...hooks] : [applyReturnPreference, hooks]
}
