// The bare GraphQL reference on PostgreSQL: Mercurius with its JIT (`jit: 1`) and Mercurius
// loaders, over `pg` (a pool of 10, named prepared statements): the schema of graphql-schema.mjs,
// each user's posts read for a whole batch of users in one windowed statement (published ones, at
// most 20 a user, as Threadline's nested lists and the SQLite peers have them).
//
//   DATABASE_URL=postgres://... node bench/peers/mercurius-pg.mjs   (PORT; prints "listening on http://host:port")
import Fastify from 'fastify'
import mercurius from 'mercurius'
import pg from 'pg'
import { typeDefs } from './graphql-schema.mjs'

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 })
const query = (name, text, values) => pool.query({ name, text, values })

const resolvers = {
  Query: {
    user: async (_parent, { id }) => (await query('user-by-id', 'select id, name, email from users where id = $1', [Number(id)])).rows[0] ?? null,
    users: async () => (await query('first-users', 'select id, name, email from users order by id limit 20', [])).rows,
  },
}

const loaders = {
  User: {
    posts: async (queries) => {
      const ids = queries.map(({ obj }) => obj.id)
      const { rows } = await query(
        'posts-of-users',
        `select id, title, user_id from (
           select id, title, user_id, row_number() over (partition by user_id order by id) as n
           from posts where status = 'published' and user_id = any($1)
         ) windowed where n <= 20 order by id`,
        [ids],
      )
      const byUser = new Map(ids.map((id) => [id, []]))
      for (const post of rows) byUser.get(post.user_id)?.push(post)
      return ids.map((id) => byUser.get(id) ?? [])
    },
  },
}

const app = Fastify({ logger: false })
await app.register(mercurius, { schema: typeDefs, resolvers, loaders, jit: 1 })
const url = await app.listen({ port: Number(process.env.PORT ?? 0), host: '127.0.0.1' })
console.log(`listening on ${url}`)
process.on('SIGTERM', () => void app.close().then(() => pool.end().then(() => process.exit(0))))
