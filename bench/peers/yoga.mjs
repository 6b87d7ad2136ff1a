// A minimal GraphQL Yoga (its defaults) on node:http, on bench/peers/graphql-schema.mjs.
//
//   DATABASE_FILE=... node bench/peers/yoga.mjs   (PORT; prints "listening on http://host:port")
import { createServer } from 'node:http'
import { createSchema, createYoga } from 'graphql-yoga'
import { createResolvers, typeDefs } from './graphql-schema.mjs'

const { resolvers, context } = createResolvers(process.env.DATABASE_FILE)
const yoga = createYoga({ schema: createSchema({ typeDefs, resolvers }), context })
const server = createServer(yoga)
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  const { address, port } = server.address()
  console.log(`listening on http://${address}:${port}`)
})
process.on('SIGTERM', () => server.close(() => process.exit(0)))
