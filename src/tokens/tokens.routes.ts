// REST adapter for tokens: sign in for a token, revoke the one in use.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { requireSignedIn } from '../core/caller.js'
import { ResourceEnvelope, resourceBody } from '../http/resource-reply.js'
import { callerKey } from '../limits/rate-limit.js'
import { IssuedToken, SignInBody } from './tokens.schemas.js'
import { tokenRequestExamples, tokensOpenApi } from './tokens.openapi.js'
import type { TokensService } from './tokens.service.js'

export const tokensRoutes: FastifyPluginAsyncTypebox<{ tokens: TokensService }> = async (app, { tokens }) => {
  app.post(
    '/tokens',
    {
      config: {
        access: 'public',
        // A token sent along must be valid, but any scope will do: signing in uses none.
        scope: 'read',
        // The answer holds the token, which the store keeps only as a hash: it is never kept for a
        // retry. A retried sign-in issues another token, and the first expires unused.
        idempotencyKeys: false,
        openapi: {
          resource: tokensOpenApi,
          requestExample: tokenRequestExamples.signIn,
          // Not a resource at a Location: shown once, and no cache may keep it.
          created: { description: 'The token, shown this once.', headers: ['Cache-Control'] },
        },
      },
      schema: {
        operationId: 'signIn',
        summary: 'Sign in for a token',
        description: 'Anyone with a password. A wrong e-mail or password is 401. The token is shown once.',
        tags: [tokensOpenApi.tag.name],
        body: SignInBody,
        response: { 201: ResourceEnvelope(IssuedToken) },
      },
    },
    async (request, reply) => {
      // The client's address as the rate limit keys it (an IPv6 client by its /64).
      const issued = await tokens.signIn(request.body, { address: callerKey(request, null) })
      return reply.code(201).header('cache-control', 'no-store').send(resourceBody(issued))
    },
  )

  app.delete(
    '/tokens/current',
    {
      // A retry finds its token revoked (401) before any key is read: keys would change nothing here.
      // Any token may end itself, a read token too.
      config: { access: 'signed-in', scope: 'read', idempotencyKeys: false, openapi: { resource: tokensOpenApi } },
      schema: {
        operationId: 'revokeToken',
        summary: 'Revoke the token in use',
        description: 'Signed in; the token sent is revoked.',
        tags: [tokensOpenApi.tag.name],
      },
    },
    async (request, reply) => {
      await tokens.revokeCurrent(requireSignedIn(request.caller))
      return reply.code(204).send()
    },
  )
}
