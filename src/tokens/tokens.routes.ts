// REST adapter for tokens: sign in for a token, revoke the one in use.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { requireSignedIn } from '../core/caller.js'
import { SingleEnvelope, single } from '../http/envelope.js'
import { callerKey } from '../limits/rate-limit.js'
import { IssuedToken, SignInBody } from './tokens.schemas.js'
import type { TokensService } from './tokens.service.js'

export const tokensRoutes: FastifyPluginAsyncTypebox<{ tokens: TokensService }> = async (app, { tokens }) => {
  app.post(
    '/tokens',
    { config: { access: 'public' }, schema: { body: SignInBody, response: { 201: SingleEnvelope(IssuedToken) } } },
    async (request, reply) => {
      // The client's address as the rate limit keys it (an IPv6 client by its /64).
      const issued = await tokens.signIn(request.body, { address: callerKey(request, null) })
      return reply.code(201).header('cache-control', 'no-store').send(single(issued))
    },
  )

  app.delete(
    '/tokens/current',
    { config: { access: 'signed-in' }, schema: {} },
    async (request, reply) => {
      await tokens.revokeCurrent(requireSignedIn(request.caller))
      return reply.code(204).send()
    },
  )
}
