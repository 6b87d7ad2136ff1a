// The composition root: opens the store, builds the services, and wires them into Fastify.
// The list of registrations below is the table of contents of the service. Tests build the app
// with this same function.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import Fastify, { type FastifyInstance } from 'fastify'
import type { Config } from './config.js'
import { openDatabase } from './db/create-database.js'
import { registerAccess } from './http/access.js'
import { MAX_BODY_BYTES, registerContentTypes } from './http/content-types.js'
import { onClientError, onFrameworkError, registerErrorHandling } from './http/error-handler.js'
import { trackAllowedMethods } from './http/method-not-allowed.js'
import { generateRequestId, OneLinePerRequest, registerRequestContext } from './http/request-context.js'
import { API_MOUNTS, DEFAULT_API_VERSION, versionHook } from './http/versioning.js'
import { commentsRoutes } from './comments/comments.routes.js'
import { createCommentsService } from './comments/comments.service.js'
import { postsRoutes } from './posts/posts.routes.js'
import { createPostsService } from './posts/posts.service.js'
import { todosRoutes } from './todos/todos.routes.js'
import { createTodosService } from './todos/todos.service.js'
import { tokensRoutes } from './tokens/tokens.routes.js'
import { createTokensService } from './tokens/tokens.service.js'
import { usersRoutes } from './users/users.routes.js'
import { createUsersService } from './users/users.service.js'
import { bodyAjv, textAjv } from './validation.js'

export async function buildApp(config: Config): Promise<FastifyInstance> {
  const database = openDatabase(config.database)
  const { db } = database
  const users = createUsersService({ db })
  const posts = createPostsService({ db })
  const comments = createCommentsService({ db })
  const todos = createTodosService({ db })
  const tokens = createTokensService({ db, tokenTtlMs: config.tokenTtlMs })

  const app = Fastify({
    logger: { level: config.logLevel, redact: ['req.headers.authorization', '*.password'] },
    logController: new OneLinePerRequest(),
    requestIdHeader: false,
    genReqId: generateRequestId,
    bodyLimit: MAX_BODY_BYTES,
    frameworkErrors: onFrameworkError,
    clientErrorHandler: onClientError,
  }).withTypeProvider<TypeBoxTypeProvider>()
  app.addHook('onClose', () => database.close())

  // HTTP wiring: validation, errors, request ids and logs, body types, who is calling.
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? bodyAjv : textAjv).compile(schema))
  registerErrorHandling(app)
  registerRequestContext(app)
  registerContentTypes(app)
  registerAccess(app, tokens)
  const answerUnservedMethods = trackAllowedMethods(app)
  app.decorateRequest('apiVersion', DEFAULT_API_VERSION)

  // The REST API, once per version prefix and once unversioned (version from Accept).
  for (const mount of API_MOUNTS) {
    await app.register(
      async (api) => {
        api.addHook('onRequest', versionHook(mount.version))
        await api.register(usersRoutes, { users })
        await api.register(postsRoutes, { posts })
        await api.register(commentsRoutes, { comments })
        await api.register(todosRoutes, { todos })
        await api.register(tokensRoutes, { tokens })
      },
      { prefix: mount.prefix },
    )
  }

  answerUnservedMethods()
  return app
}
