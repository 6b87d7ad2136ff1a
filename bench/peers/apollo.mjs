// A minimal Apollo Server (standalone, its defaults) on bench/peers/graphql-schema.mjs.
//
//   DATABASE_FILE=... node bench/peers/apollo.mjs   (PORT; prints "listening on http://host:port")
import { ApolloServer } from '@apollo/server'
import { startStandaloneServer } from '@apollo/server/standalone'
import { createResolvers, typeDefs } from './graphql-schema.mjs'

const { resolvers, context } = createResolvers(process.env.DATABASE_FILE)
const server = new ApolloServer({ typeDefs, resolvers })
const { url } = await startStandaloneServer(server, {
  listen: { port: Number(process.env.PORT ?? 0), host: '127.0.0.1' },
  context: async () => context(),
})
console.log(`listening on ${url.replace(/\/$/, '')}`)
process.on('SIGTERM', () => void server.stop().then(() => process.exit(0)))
