// The bare GraphQL reference: Mercurius with its JIT after the first run of a query
// (`jit: 1`) on Fastify, nothing else, serving bench/peers/graphql-schema.mjs (the same type
// definitions and resolvers as the Apollo Server and Yoga peers) over the same SQLite file.
//
//   DATABASE_FILE=... node bench/peers/mercurius-bare.mjs   (PORT; prints "listening on http://host:port")
import Fastify from 'fastify'
import mercurius from 'mercurius'
import { createResolvers, typeDefs } from './graphql-schema.mjs'

const { resolvers, context } = createResolvers(process.env.DATABASE_FILE)
const app = Fastify({ logger: false })
await app.register(mercurius, { schema: typeDefs, resolvers, context, jit: 1 })
const url = await app.listen({ port: Number(process.env.PORT ?? 0), host: '127.0.0.1' })
console.log(`listening on ${url}`)
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)))
